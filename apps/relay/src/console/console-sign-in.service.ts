import { Inject, Injectable } from '@nestjs/common';
import { assertNotBlocked, DomainError, epoch, issueConsoleLink, recordAuthFailure, signInToConsole, signOutOfConsole } from '@svc/domain';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { secureRandomBytes, Secrets } from '../common/auth/secrets';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import { consoleWhere } from './console-url';

/**
 * The console's sign-in without a copy-paste (issue 34): a one-time link (`/console/login#<ticket>`,
 * 15 minutes) printed by `svc relay start` and `svc relay console`; the console page posts the ticket
 * (a fragment never reaches a server log or a Referer) and gets an HttpOnly cookie for
 * RELAY_CONSOLE_SESSION_HOURS. The log records only keyed digests of both.
 */
@Injectable()
export class ConsoleSignIn {
  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly secrets: Secrets,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {}

  /** A new link, for a browser on this machine. */
  async issueLink(): Promise<{ url: string; expiresAt: Date }> {
    const where = consoleWhere(this.config, this.runtime.port);
    if (where.state === 'unreachable') {
      throw new DomainError(
        'console.unreachable',
        'conflict',
        `the console answers only on loopback, and the relay listens on ${where.host}: bind 0.0.0.0 or 127.0.0.1 to use it`,
      );
    }
    const ticket = secureRandomBytes(32).toString('base64url');
    const [e] = await this.loop.run('operator', (_m, now) => issueConsoleLink(this.secrets.digest(ticket), now));
    return { url: `${where.url}login#${ticket}`, expiresAt: new Date((e.data as { expiresAt: string }).expiresAt) };
  }

  /**
   * Opens a link: the cookie's value and its lifetime. A wrong ticket is counted like a bad bearer; the
   * right one passes even while the address is blocked (strangers behind a same-host proxy share 127.0.0.1).
   */
  async signIn(ticket: string, ip: string): Promise<{ cookie: string; maxAgeSeconds: number; expiresAt: number }> {
    const linkDigest = this.secrets.digest(ticket);
    const now = this.clock.now();
    if (this.loop.models.consoleAccess.linkExpiry(linkDigest, now) === null) {
      assertNotBlocked(this.loop.models.rateLimit, ip, now);
      await this.loop.run(`public:${ip}`, (m, at) =>
        recordAuthFailure(m.rateLimit, { ip, kind: 'token', via: 'http', reason: 'unknown, used or expired console sign-in link' }, at),
      );
    }
    const cookie = secureRandomBytes(32).toString('base64url');
    const sessionSeconds = this.config.consoleSessionHours * 3600;
    const [e] = await this.loop.run('operator', (m, at) =>
      signInToConsole(m.consoleAccess, { linkDigest, sessionDigest: this.secrets.digest(cookie), sessionSeconds }, at),
    );
    return { cookie, maxAgeSeconds: sessionSeconds, expiresAt: epoch(new Date((e.data as { expiresAt: string }).expiresAt)) };
  }

  /** Signs the browser holding `cookie` out; false when it held none that was live. */
  async signOut(cookie: string | null): Promise<boolean> {
    if (cookie === null) return false;
    const stored = await this.loop.run('operator', (m, now) => signOutOfConsole(m.consoleAccess, this.secrets.digest(cookie), now));
    return stored.length > 0;
  }
}
