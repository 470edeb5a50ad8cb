import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteAuth } from '../common/auth';
import type { Clock } from '../common/clock';
import type { CommandLoop } from '../common/command-loop';
import type { DiskGuard } from '../common/disk-guard';
import { checkLoopback } from '../common/net';
import type { Runtime } from '../common/tokens';
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
  },
): void {
  const config: RouteAuth = { auth: 'public' };
  const loopback = (r: FastifyRequest) => checkLoopback(r.socket.remoteAddress, r.headers, deps.runtime.port).ok;
  instance.get('/health', { config }, async (request, reply): Promise<HealthBody> => {
    void reply.header('Cache-Control', 'no-store');
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
      // relay.disk_low). The figures are the operator's (loopback); anyone else learns only `low`.
      ...(deps.disk?.enabled ? { disk: loopback(request) ? deps.disk.view() : { low: deps.disk.low } } : {}),
      terminal_recording: deps.terminalRecording,
    };
  });
}
