import { Body, Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { SignInAnswer, SignInLinkAnswer, SignOutAnswer } from '@svc/console-api';
import { epoch } from '@svc/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Auth, PeerIp } from '../common/auth/auth';
import type { RelayConfig } from '../common/config/relay-config';
import { clearedConsoleCookie, consoleCookie, consoleCookieName, cookieValue } from '../common/auth/console-cookie';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import { ConsoleSignIn } from './console-sign-in.service';
import { ConsoleSignInDto } from './features/console.dto';

/** The console's sign-in: a one-time link becomes a cookie (console-sign-in.service.ts); links for the CLI; sign-out. */
@Controller('/console/api/session')
export class ConsoleSignInController {
  constructor(
    private readonly signIn: ConsoleSignIn,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {}

  /** The page at `/console/login#<ticket>` posts its ticket here; no other credential exists yet. */
  @Post()
  @Auth('console-app')
  @HttpCode(200)
  async open(@Body() body: ConsoleSignInDto, @PeerIp() ip: string, @Res({ passthrough: true }) reply: FastifyReply): Promise<SignInAnswer> {
    const s = await this.signIn.signIn(body.ticket, ip);
    void reply.header('set-cookie', consoleCookie(this.runtime.port, s.cookie, s.maxAgeSeconds, this.config.tls !== null));
    return { ok: true, expires_at: s.expiresAt };
  }

  /** `svc relay console`: a fresh link for a browser on this machine. */
  @Post('/links')
  @Auth('operator')
  @HttpCode(200)
  async link(): Promise<SignInLinkAnswer> {
    const l = await this.signIn.issueLink();
    return { ok: true, url: l.url, expires_at: epoch(l.expiresAt) };
  }

  /** Ends this browser's console session (its cookie), whatever the credential of the request. */
  @Post('/end')
  @Auth('operator')
  @HttpCode(200)
  async end(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<SignOutAnswer> {
    const signedOut = await this.signIn.signOut(cookieValue(req.headers.cookie, consoleCookieName(this.runtime.port)));
    void reply.header('set-cookie', clearedConsoleCookie(this.runtime.port, this.config.tls !== null));
    return { ok: true, signed_out: signedOut };
  }
}
