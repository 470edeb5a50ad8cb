import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteAuth } from '../common/auth/auth';
import type { Clock } from '../common/loop/clock';
import type { CommandLoop } from '../common/loop/command-loop';
import type { DiskGuard } from '../common/loop/disk-guard';
import { checkLoopback } from '../common/http/net';
import { OPERATOR_KEY_HEADER, type OperatorKey } from '../common/auth/operator-key';
import type { Runtime } from '../common/auth/tokens';
import { secureLinkStatus } from '../secure-link/secure-link-status';

export type HealthBody = {
  status: 'ok';
  version: string;
  clients: number;
  sessions: number;
  /** RELAY_CLIENT_SPELLING: the brand in what the relay writes (`svc`, or `hermes` for the public clients). */
  client_spelling: 'svc' | 'hermes';
  secure_link: Record<string, unknown>;
  secure_proxy?: Record<string, unknown>;
  disk?: ReturnType<DiskGuard['view']> | { low: boolean };
  /** RELAY_TERMINAL_RECORDING: whether shells are recorded (a phone's user may want to know). */
  terminal_recording: boolean;
  /**
   * A relay on PostgreSQL: `leader` or `standby`, the leader's epoch (the fence of every append), the last
   * seq in its read models, and a standby's lag (records behind the last notified head; ms since it last read to the log's end).
   */
  role?: { role: 'leader' | 'standby'; epoch: number | null; seq: number; lag_records?: number; lag_ms?: number };
};

/**
 * `GET /health` (spec 4.1): public, no credential, nothing secret. A plain Fastify route rather than a
 * Nest controller: it is the probe load balancers and the pair command hammer, and Nest's per-route
 * pipeline cost it about a quarter of its throughput (docs/BENCHMARKS.md). It still passes the auth
 * hook as a `public` route.
 */
export function installHealthRoute(
  instance: FastifyInstance,
  deps: {
    loop: CommandLoop;
    clock: Clock;
    runtime: Runtime;
    secureLinkEnabled: boolean;
    clientSpelling: 'svc' | 'hermes';
    disk?: DiskGuard;
    terminalRecording: boolean;
    operatorKey: OperatorKey;
  },
): void {
  const config: RouteAuth = { auth: 'public' };
  // The disk figures are the operator's: a loopback request with the key (a same-host proxy makes anyone loopback).
  const operator = (r: FastifyRequest) => {
    const key = r.headers[OPERATOR_KEY_HEADER];
    return typeof key === 'string' && checkLoopback(r.raw, deps.runtime.port).ok && deps.operatorKey.matches(key.trim());
  };
  const json = lastJson<HealthBody>();
  instance.get('/health', { config }, async (request, reply): Promise<string> => {
    void reply.header('Cache-Control', 'no-store').type('application/json; charset=utf-8');
    return json(body(request));
  });
  function body(request: FastifyRequest): HealthBody {
    const sl = deps.runtime.secureLink ?? null;
    const state = deps.loop.models.secureLink.state;
    return {
      status: 'ok',
      version: deps.runtime.version,
      clients: deps.loop.models.connections.count(),
      sessions: deps.loop.models.sessions.count(deps.clock.now()),
      client_spelling: deps.clientSpelling,
      // Spec 4.1/4.11: whether Secure Link runs, its public identity (the pin phones hold) and the last
      // identity change (phones paired before it must pair again). Nothing here is a secret.
      secure_link: {
        display_name: 'svc Secure Link',
        enabled: deps.secureLinkEnabled,
        status: secureLinkStatus(deps.runtime, deps.secureLinkEnabled),
        security: 'pinned_tls',
        capabilities: ['relay', 'api', 'dashboard'],
        ...(sl ? { url: sl.url, services: sl.services(), identity: sl.identityView() } : {}),
        ...(!sl && state.reason ? { last_error: state.reason } : {}),
        ...(state.changedAt !== null ? { identity_changed_at: new Date(state.changedAt).toISOString() } : {}),
        reach: deps.runtime.reach?.status() ?? deps.runtime.reachStatus ?? { enabled: false, state: 'disabled', transport: 'opaque_inner_tls' },
      },
      ...(sl ? { secure_proxy: sl.candidate() } : {}),
      // Whether the relay takes new work: below the reserve it refuses pairings, uploads and messages (503
      // relay.disk_low). The figures are the operator's (loopback with the key); anyone else learns only `low`.
      ...(deps.disk?.enabled ? { disk: operator(request) ? deps.disk.view() : { low: deps.disk.low } } : {}),
      terminal_recording: deps.terminalRecording,
      ...(deps.loop.storeKind === 'postgres' ? { role: roleView(deps.loop) } : {}),
    };
  }
}

function roleView(loop: CommandLoop): NonNullable<HealthBody['role']> {
  const r = loop.role();
  // Lag in steps of 100 ms: between two reads the body stays the same (and cached).
  const seq = loop.lastSeq;
  return r.lag
    ? { role: r.role, epoch: r.epoch, seq, lag_records: r.lag.records, lag_ms: Math.round(r.lag.ms / 100) * 100 }
    : { role: r.role, epoch: r.epoch, seq };
}

/**
 * JSON.stringify that hands back the last text when the value equals the last one, leaf by leaf: between two changes
 * (a phone connecting, the disk re-checked) every probe answers the same body, and comparing its ~25 leaves costs a
 * tenth of serializing them again (docs/BENCHMARKS.md, "What a `GET /health` costs"). For the relay's own plain values only.
 */
export function lastJson<T>(): (value: T) => string {
  let last: { value: T; text: string } | null = null;
  return (value) => {
    if (last !== null && sameJson(last.value, value)) return last.text;
    last = { value, text: JSON.stringify(value) };
    return last.text;
  };
}

/** Whether two plain JSON values (objects, arrays, strings, numbers, booleans, null) serialize the same. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  // Anything but a plain object (a Date, a Map, a class) may serialize differently with the same own keys.
  if (Array.isArray(b) || Object.getPrototypeOf(a) !== Object.prototype || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    // Same keys in the same order: the texts are then equal too.
    if (ka[i] !== kb[i] || !sameJson((a as Record<string, unknown>)[ka[i]], (b as Record<string, unknown>)[kb[i]])) return false;
  }
  return true;
}
