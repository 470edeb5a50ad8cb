import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { relayDir, type RelayConfig } from '../common/config';
import type { CommandLoop } from '../common/command-loop';
import { advertisedHost, IdentityError, loadOrCreateIdentity } from './identity';
import { SecureLinkServer } from './secure-link.server';

/** Where the relay keeps its own Secure Link identity. */
export function secureLinkDir(config: Pick<RelayConfig, 'svcHome'>): string {
  return path.join(relayDir(config), 'secure-link');
}

/**
 * Starts Secure Link after the relay listens: the identity loaded or made, the origin bound, and the
 * outcome in the log (`secure_link.started`, with `secure_link.identity_changed` first when the pin is
 * not the one phones were last given; or `secure_link.unavailable` with the reason). A failure never
 * stops the relay: it runs without Secure Link and says why (`/health`, the console, `doctor`).
 */
export async function startSecureLink(deps: {
  config: RelayConfig;
  log: CommandLoop;
  logger: Logger;
  relayServer: http.Server;
}): Promise<SecureLinkServer | null> {
  const { config, log, logger } = deps;
  const sl = config.secureLink;
  const host = advertisedHost(sl.host);
  const dir = secureLinkDir(config);
  let server: SecureLinkServer | null = null;
  try {
    const existed = Boolean(sl.cert) || fs.existsSync(path.join(dir, 'cert.pem'));
    const identity = loadOrCreateIdentity({ dir, host, cert: sl.cert, key: sl.key });
    server = new SecureLinkServer(deps.relayServer, identity, sl, host, config.webapiUrl, logger);
    await server.start();
    const previous = log.models.secureLink.lastPin;
    await log.run('system', () => [
      ...(previous && previous !== identity.pin
        ? [{ type: 'secure_link.identity_changed' as const, data: { previousPin: previous, pin: identity.pin } }]
        : []),
      {
        type: 'secure_link.started' as const,
        data: {
          url: server!.url,
          port: server!.listeningPort,
          pin: identity.pin,
          source: identity.source,
          sans: identity.sans,
          notAfter: identity.notAfter,
          created: !existed,
        },
      },
    ]);
    if (previous && previous !== identity.pin)
      logger.warn({ pin: identity.pin }, 'Secure Link identity changed: phones paired through it must pair again');
    logger.info({ url: server.url, pin: identity.pin }, 'Secure Link listening');
    return server;
  } catch (err) {
    await server?.close();
    const reason =
      err instanceof IdentityError
        ? err.message
        : (err as NodeJS.ErrnoException).code === 'EADDRINUSE'
          ? `port ${sl.port} on ${sl.host} is in use (RELAY_SECURE_LINK_PORT)`
          : (err as Error).message;
    logger.error({ reason }, 'Secure Link not started; the relay runs without it');
    await log.run('system', () => [{ type: 'secure_link.unavailable', data: { reason: reason.slice(0, 500) } }]);
    return null;
  }
}
