import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import type { Logger } from 'pino';
import type { RelayConfig } from '../common/config/relay-config';
import type { CommandLoop } from '../common/loop/command-loop';
import { advertisedHost } from '../common/config/hosts';
import { IdentityError, loadOrCreateIdentity } from './identity';
import { assertNotBlocked, recordAuthFailure } from '@svc/domain';
import type { ApiGate } from './api-gate';
import { SecureLinkServer } from './secure-link.server';
import { reachHostIdFile, secureLinkDir } from './secure-link-paths';
import { ReachConnector } from '../reach/connector';
import { brokerUrls, loadOrCreateHostId } from '../reach/connector-config';
import type { Runtime } from '../common/auth/tokens';

/**
 * Starts Secure Link after the relay listens: the identity loaded or made, the origin bound, and the
 * outcome in the log (`secure_link.started`, with `secure_link.identity_changed` first when the pin is
 * not the one phones were last given; or `secure_link.unavailable` with the reason). A failure never
 * stops the relay: it runs without Secure Link and says why (`/health`, the console, `doctor`).
 */
export async function startSecureLink(deps: {
  config: RelayConfig;
  loop: CommandLoop;
  logger: Logger;
  relayServer: http.Server;
}): Promise<SecureLinkServer | null> {
  const { config, loop, logger } = deps;
  const sl = config.secureLink;
  const host = advertisedHost(sl.host);
  const dir = secureLinkDir(config);
  let server: SecureLinkServer | null = null;
  try {
    const existed = Boolean(sl.cert) || fs.existsSync(path.join(dir, 'cert.pem'));
    const identity = loadOrCreateIdentity({ dir, host, cert: sl.cert, key: sl.key });
    server = new SecureLinkServer(deps.relayServer, identity, sl, host, config.webapiUrl, logger, apiGate(config, loop));
    await server.start();
    const previous = loop.models.secureLink.lastPin;
    await loop.run('system', () => [
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
    await loop.run('system', () => [{ type: 'secure_link.unavailable', data: { reason: reason.slice(0, 500) } }]);
    return null;
  }
}

/**
 * The `/api` namespace's gate: the API key (API_SERVER_KEY) as the bearer, with the relay's rate limiter:
 * a blocked peer is refused, a wrong key counts as a bad token for that peer (it may be a weak, operator-
 * chosen key, so guessing it must be as slow as guessing a session).
 */
function apiGate(config: RelayConfig, loop: CommandLoop): ApiGate {
  return {
    key: config.apiServer.key,
    check: async (peer, failed) => {
      await loop.run(`public:${peer}`, (m, now) => {
        assertNotBlocked(m.rateLimit, peer, now);
        return !failed
          ? []
          : recordAuthFailure(m.rateLimit, { ip: peer, kind: 'token', via: 'http', reason: 'wrong API key through Secure Link' }, now);
      });
    },
  };
}

/**
 * The Reach connector (RELAY_EXPERIMENTAL_REACH_ENABLED=1): needs Secure Link running (its streams end in
 * the Secure Link origin), a broker URL and the host token from the environment. Misconfigured, it is
 * `unavailable` with the reason (`/health`, the log) and the relay runs on. Its connected/lost changes
 * are events; each attempt is not.
 */
export function startReach(deps: {
  config: RelayConfig;
  loop: CommandLoop;
  logger: Logger;
  secureLink: SecureLinkServer | null;
  runtime: Runtime;
  backoff?: { baseMs: number; maxMs: number };
}): ReachConnector | null {
  const r = deps.config.secureLink.reach;
  const base = { transport: 'opaque_inner_tls' };
  if (!r.enabled) {
    deps.runtime.reachStatus = { enabled: false, state: 'disabled', last_error: null, ...base };
    return null;
  }
  const unavailable = (error: string) => {
    deps.runtime.reachStatus = { enabled: true, state: 'unavailable', last_error: error, ...base };
    deps.logger.error({ reason: error }, 'Reach unavailable');
    void deps.loop
      .run('system', () => [{ type: 'secure_link.reach_changed', data: { state: 'unavailable', hostId: null, error } }])
      .catch(() => undefined);
    return null;
  };
  if (!deps.secureLink) return unavailable('Reach needs Secure Link running (RELAY_SECURE_LINK_ENABLED=1): its streams end there');
  if (!r.brokerUrl) return unavailable('RELAY_SECURE_LINK_BROKER_URL is not set');
  if (!r.hostToken) return unavailable('RELAY_SECURE_LINK_BROKER_HOST_TOKEN is not set (the environment only)');
  if (r.hostToken.length < 32 || r.hostToken.length > 512) return unavailable('RELAY_SECURE_LINK_BROKER_HOST_TOKEN must be 32-512 characters');
  let hostId: string;
  let ca: string | undefined;
  try {
    brokerUrls(r.brokerUrl);
    if (r.caFile) ca = fs.readFileSync(r.caFile, 'utf8');
    hostId = loadOrCreateHostId(reachHostIdFile(deps.config, r.hostIdFile));
  } catch (err) {
    return unavailable((err as Error).message);
  }
  const sl = deps.secureLink;
  let wasConnected = false;
  const connector = new ReachConnector({
    brokerUrl: r.brokerUrl,
    hostToken: r.hostToken,
    hostId,
    accept: (stream, peer) => sl.acceptStream(stream, peer),
    ca,
    logger: deps.logger,
    backoff: deps.backoff,
    limits: { ...deps.config.sockets, pingIntervalMs: deps.config.pingIntervalMs },
    onState: (state, error) => {
      if (state === 'connected') wasConnected = true;
      const logged = state === 'connected' ? 'connected' : state === 'backoff' && wasConnected ? 'lost' : null;
      if (state === 'backoff') wasConnected = false;
      if (logged)
        void deps.loop
          .run('system', () => [{ type: 'secure_link.reach_changed', data: { state: logged, hostId, error: logged === 'lost' ? error : null } }])
          .catch(() => undefined);
    },
  });
  connector.start();
  return connector;
}
