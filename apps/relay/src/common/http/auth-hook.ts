import { DomainError, assertNotBlocked, hasGrant, markSeen, recordAuthFailure, type Principal } from '@svc/domain';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AuthedRequest, RouteAuth } from '../auth/auth';
import type { Clock } from '../loop/clock';
import type { CommandLoop } from '../loop/command-loop';
import { peerOf } from './forwarded-peer';
import { refusesAsNotJson } from './json-only';
import { checkLoopback, hasProxyHeader, isLoopbackPeer } from './net';
import { consoleCookieName, cookieValue } from '../auth/console-cookie';
import { OPERATOR_KEY_HEADER, type OperatorKey } from '../auth/operator-key';
import type { LoopbackTrust } from '../config/relay-config';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Secrets } from '../auth/secrets';

export type AuthDeps = {
  loop: CommandLoop;
  secrets: Secrets;
  clock: Clock;
  logger: Logger;
  port: () => number;
  /** API voice (spec 5): the API bearer, and what makes a non-loopback request secure enough to carry it. */
  apiVoice?: { key: string | null; tls: boolean; trustProxyHeaders: boolean };
};

/** What the HTTP hook needs beyond a bearer check: the operator's credential and the platform routes' trust. */
export type HookDeps = AuthDeps & {
  /** The home's operator key (operator-key.ts). */
  operatorKey: OperatorKey;
  /** RELAY_LOOPBACK_TRUST: what a platform route asks of a loopback caller. */
  loopbackTrust: LoopbackTrust;
};

/** The API-voice settings of a relay's configuration (the same for the HTTP hook and the voice sockets). */
export function apiVoiceOf(config: {
  apiServer: { key: string | null };
  tls: unknown;
  trustProxyHeaders: boolean;
}): NonNullable<AuthDeps['apiVoice']> {
  return { key: config.apiServer.key, tls: config.tls !== null, trustProxyHeaders: config.trustProxyHeaders };
}

const TOKEN_RE = /^[A-Za-z0-9_\-.~+/=]{16,512}$/;

/**
 * The credential of `Authorization: Bearer <credential>`: null when there is none (no header, another
 * scheme, `Bearer` alone), else what follows the scheme, trimmed (it may still be malformed).
 */
export function bearerCredential(header: string | undefined): string | null {
  if (!header) return null;
  const h = header.trim();
  if (h.length < 7 || h.slice(0, 6).toLowerCase() !== 'bearer' || (h[6] !== ' ' && h[6] !== '\t')) return null;
  const credential = h.slice(7).trim();
  return credential === '' ? null : credential;
}

/**
 * Resolves a bearer to its session, feeding the rate limiter on failure. Shared by the HTTP hook and
 * anything else that takes a session bearer.
 */
export async function authenticateBearer(deps: AuthDeps, header: string | undefined, ip: string, grant?: string): Promise<Principal> {
  const { loop, secrets, clock } = deps;
  assertNotBlocked(loop.models.rateLimit, ip, clock.now());
  const credential = bearerCredential(header);
  if (credential === null)
    throw new DomainError('auth.missing_bearer', 'unauthorized', 'send the relay session token as "Authorization: Bearer <token>"');
  // A bearer that cannot be a session token (too short, spaces, other characters) is a wrong token, not a
  // missing one: the caller did send a credential, and it counts against its address like any other.
  const session = TOKEN_RE.test(credential) ? loop.models.sessions.byToken(secrets.digest(credential), clock.now()) : undefined;
  if (!session) {
    await loop.run(`public:${ip}`, (models, now) =>
      recordAuthFailure(models.rateLimit, { ip, kind: 'token', via: 'http', reason: 'unknown, revoked or expired session token' }, now),
    );
    throw new DomainError('auth.invalid_token', 'unauthorized', 'unknown, revoked or expired session token');
  }
  if (grant && !hasGrant(session, grant, clock.now())) {
    throw new DomainError('auth.grant_required', 'forbidden', `this session has no active "${grant}" grant`, { channel: grant });
  }
  loop
    .run(`device:${session.tokenPrefix}`, (models, now) => markSeen(models, session.tokenPrefix, ip, 'http', now))
    .catch((err: Error) => {
      deps.logger.warn({ err: err.message }, 'last-seen not recorded');
    });
  return { kind: 'device', tokenPrefix: session.tokenPrefix, deviceId: session.deviceId, deviceName: session.deviceName };
}

/**
 * The one HTTP door: every request is authenticated by its route's class (`@Auth`, auth.ts) before anything
 * else runs. A route registered without a class stops start-up when the app gets ready (Fastify's `onReady`,
 * which `listen` awaits before it binds): it is never served, not even by a relay that stops a moment later.
 */
export function installAuthHook(instance: FastifyInstance, deps: HookDeps): void {
  const unguarded: string[] = [];
  instance.addHook('onRoute', (route) => {
    const cfg = route.config as Partial<RouteAuth> | undefined;
    if (!cfg?.auth && route.method !== 'HEAD') unguarded.push(`${String(route.method)} ${route.url}`);
    if (typeof cfg?.bodyLimit === 'number') route.bodyLimit = cfg.bodyLimit;
  });
  instance.addHook('onReady', async () => {
    if (unguarded.length > 0)
      throw new Error(`routes without @Auth(): ${unguarded.join(', ')} (every route declares its auth class: apps/relay/src/common/auth/auth.ts)`);
  });
  // Callback style, not async: public and platform routes (/health, the host tools') are decided without
  // a promise; only a credential that must be recorded as wrong waits (for the rate limiter's event).
  instance.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const req = request as AuthedRequest;
    // The peer limits are keyed by: the socket's, or the one a relay forwarder vouches for (forwarded-peer.ts).
    const ip = peerOf(req.raw, deps.secrets);
    req.peerIp = ip;
    const cfg = req.routeOptions.config as Partial<RouteAuth> | undefined;
    try {
      // Fastify answers HEAD on every GET route by running the GET handler. A GET that acts (every Device
      // Control route sends a command to the phone, and /return_to_svc moves it) must not run for a HEAD.
      if (req.method === 'HEAD' && cfg?.noHead) {
        reply.header('allow', 'GET');
        throw new DomainError(
          'method_not_allowed',
          'method_not_allowed',
          `HEAD is not answered on ${req.routeOptions.url ?? req.url}: it would run the command; use GET`,
        );
      }
      switch (cfg?.auth) {
        // No class: not a registered route (start-up refuses those), but Fastify's not-found answer.
        case undefined:
        case 'public':
          return done();
        case 'operator':
          assertLoopback(req, deps);
          return operator(req, ip, 'refuse', done);
        case 'platform':
          assertLoopback(req, deps);
          if (deps.loopbackTrust === 'loopback') return asOperator(req, done);
          return operator(req, ip, req.headers.authorization !== undefined ? 'bearer' : 'refuse', done, cfg.grant);
        case 'console-app':
          assertLoopback(req, deps);
          req.principal = { kind: 'operator' };
          return done();
        case 'platform-or-paired':
        case 'operator-or-paired': {
          // A route that names its caller (desktop dispatch) checks a bearer sent from loopback too: a bad
          // token is refused rather than quietly treated as the operator.
          if (cfg.bearerOnLoopback && req.headers.authorization !== undefined && !isOperatorBearer(deps, req))
            return bearer(req, ip, cfg.grant, done);
          if (!checkLoopback(req.raw, deps.port()).ok) return bearer(req, ip, cfg.grant, done);
          if (cfg.auth === 'platform-or-paired' && deps.loopbackTrust === 'loopback') return asOperator(req, done);
          return operator(req, ip, 'bearer', done, cfg.grant);
        }
        case 'paired':
          return bearer(req, ip, cfg.grant, done);
        case 'voice':
          if (isApiBearer(deps, req.headers.authorization)) {
            apiVoiceTransport(deps, req.raw);
            req.principal = { kind: 'api' };
            return done();
          }
          if (cfg.operatorOnLoopback && req.headers.authorization === undefined && checkLoopback(req.raw, deps.port()).ok) {
            return operator(req, ip, 'refuse', done);
          }
          return bearer(req, ip, cfg.grant, done);
        default:
          // Unreachable by type; a route with a class this hook does not know is refused, never left hanging.
          throw new DomainError('auth.unknown_class', 'forbidden', 'this route has no known auth class');
      }
    } catch (err) {
      done(err as Error);
    }
  });
  const bearer = (req: AuthedRequest, ip: string, grant: string | undefined, done: (err?: Error) => void): void => {
    authenticateBearer(deps, req.headers.authorization, ip, grant).then((principal) => {
      req.principal = principal;
      done();
    }, done);
  };
  const asOperator = (req: AuthedRequest, done: (err?: Error) => void): void => {
    assertJsonBody(req);
    req.principal = { kind: 'operator' };
    done();
  };
  /**
   * The operator's credential on a loopback request: the key or the console's cookie makes it the operator.
   * Without one, `otherwise` decides: `bearer` tries the session bearer (a route a paired device may use
   * too), `refuse` answers 401. A wrong key is counted like a bad bearer; a missing key, or a cookie that
   * ended, is not (a console tab left open must not get its own machine blocked). The right key passes
   * even while the address is blocked: behind a same-host proxy every stranger shares 127.0.0.1, and
   * their wrong keys must not lock the operator out (a 256-bit key is not guessed by trying).
   */
  const operator = (req: AuthedRequest, ip: string, otherwise: 'bearer' | 'refuse', done: (err?: Error) => void, grant?: string): void => {
    const verdict = operatorCredential(deps, req, otherwise === 'refuse');
    if (verdict === 'ok') return asOperator(req, done);
    if (verdict === 'missing' && otherwise === 'bearer' && req.headers.authorization !== undefined) return bearer(req, ip, grant, done);
    if (verdict === 'missing') return done(operatorKeyRequired(deps.loopbackTrust, otherwise === 'bearer'));
    assertNotBlocked(deps.loop.models.rateLimit, ip, deps.clock.now());
    deps.loop
      .run(`public:${ip}`, (models, now) =>
        recordAuthFailure(models.rateLimit, { ip, kind: 'token', via: 'http', reason: 'wrong operator key' }, now),
      )
      .then(
        () => done(new DomainError('auth.operator_key_required', 'unauthorized', 'wrong operator key: send the key in <home>/relay/operator.key')),
        done,
      );
  };
}

/** Every class that trusts loopback first checks that the request is one (net.ts); 403 otherwise. */
function assertLoopback(req: AuthedRequest, deps: HookDeps): void {
  const verdict = checkLoopback(req.raw, deps.port());
  if (!verdict.ok) throw new DomainError('auth.loopback_only', 'forbidden', verdict.reason);
}

/**
 * `ok`: the request carries the operator key (`X-Operator-Key`; `Authorization: Bearer <key>` too where
 * `bearerIsKey`, the operator-only routes, so a Prometheus scraper can send it) or a live console cookie.
 * `wrong`: it carries a key that is not the key. `missing`: neither (an ended or unknown cookie counts as
 * missing: the browser keeps sending it until it signs in again).
 */
function operatorCredential(deps: HookDeps, req: AuthedRequest, bearerIsKey: boolean): 'ok' | 'wrong' | 'missing' {
  const header = req.headers[OPERATOR_KEY_HEADER];
  const given = Array.isArray(header) ? header[0] : header;
  if (given !== undefined && given.trim() !== '') return deps.operatorKey.matches(given.trim()) ? 'ok' : 'wrong';
  if (bearerIsKey || isOperatorBearer(deps, req)) {
    const credential = bearerCredential(req.headers.authorization);
    if (credential !== null) return deps.operatorKey.matches(credential) ? 'ok' : bearerIsKey ? 'wrong' : 'missing';
  }
  const cookie = cookieValue(req.headers.cookie, consoleCookieName(deps.port()));
  if (cookie !== null && deps.loop.models.consoleAccess.sessionExpiry(deps.secrets.digest(cookie), deps.clock.now()) !== null) return 'ok';
  return 'missing';
}

/** A bearer that is the operator key (where a session bearer could also be sent: the key is checked first). */
function isOperatorBearer(deps: HookDeps, req: AuthedRequest): boolean {
  const credential = bearerCredential(req.headers.authorization);
  return credential !== null && deps.operatorKey.matches(credential);
}

function operatorKeyRequired(trust: LoopbackTrust, orBearer: boolean): DomainError {
  const how =
    'send the key in <home>/relay/operator.key as X-Operator-Key (the svc CLI does), or sign in to the console with the link "svc relay console" prints';
  return new DomainError(
    'auth.operator_key_required',
    'unauthorized',
    orBearer
      ? `this route needs the operator key or a session bearer${trust === 'key' ? ' (RELAY_LOOPBACK_TRUST=key)' : ''}: ${how}`
      : `this route is the operator's: ${how}`,
  );
}

/**
 * The `voice` class outside the HTTP hook (a voice WebSocket's upgrade request): API voice under the same
 * transport rule, or the session bearer with `grant`.
 */
export async function authenticateVoice(deps: AuthDeps, req: IncomingMessage, grant: string): Promise<Principal> {
  if (isApiBearer(deps, req.headers.authorization)) {
    apiVoiceTransport(deps, req);
    return { kind: 'api' };
  }
  return authenticateBearer(deps, req.headers.authorization, peerOf(req, deps.secrets), grant);
}

/** The API bearer, compared in constant time (digests of equal length), never logged or recorded. */
function isApiBearer(deps: AuthDeps, header: string | undefined): boolean {
  const key = deps.apiVoice?.key;
  if (!key || !header) return false;
  const credential = bearerCredential(header);
  if (credential === null) return false;
  return timingSafeEqual(createHash('sha256').update(credential).digest(), createHash('sha256').update(key).digest());
}

/**
 * Spec 5 rule 3: from a non-loopback peer the API bearer needs HTTPS (this relay's TLS, or
 * `X-Forwarded-Proto: https` when RELAY_TRUST_PROXY_HEADERS=1), unless the operator opened the escape
 * hatch (RELAY_ALLOW_INSECURE_API_BEARER / --allow-insecure-api-key at start, PATCH /relay/security).
 */
function apiVoiceTransport(deps: AuthDeps, req: IncomingMessage): void {
  // A proxied request (a forwarding header) came from elsewhere, whatever the TCP peer.
  if (isLoopbackPeer(req.socket.remoteAddress) && !hasProxyHeader(req.headers)) return;
  const v = deps.apiVoice!;
  if (v.tls) return;
  const proto = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : (proto ?? '')).split(',')[0].trim().toLowerCase();
  if (v.trustProxyHeaders && first === 'https') return;
  if (deps.loop.models.voice.allowInsecureApiBearer) return;
  throw new DomainError(
    'auth.api_key_needs_https',
    'forbidden',
    'the API key is accepted from another host only over HTTPS (set RELAY_SSL_CERT/RELAY_SSL_KEY, or RELAY_TRUST_PROXY_HEADERS=1 behind a TLS proxy; `svc relay insecure-api-key on` allows plain HTTP until restart)',
  );
}

/** The operator's loopback routes take bodies only as JSON (json-only.ts); a request without a body needs no type. */
function assertJsonBody(req: FastifyRequest): void {
  if (refusesAsNotJson(req.method, req.headers, 'allowed')) {
    throw new DomainError('unsupported_media_type', 'unsupported', 'send the body as application/json');
  }
}
