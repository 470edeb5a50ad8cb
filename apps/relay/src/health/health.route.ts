import type { FastifyInstance } from 'fastify';
import type { RouteAuth } from '../common/auth';
import type { Clock } from '../common/clock';
import type { CommandLoop } from '../common/command-loop';
import type { Runtime } from '../common/tokens';

export type HealthBody = { status: 'ok'; version: string; clients: number; sessions: number };

/**
 * `GET /health` (spec 4.1): public, no credential, nothing secret. A plain Fastify route rather than a
 * Nest controller: it is the probe load balancers and the pair command hammer, and Nest's per-route
 * pipeline cost it about a quarter of its throughput (docs/BENCHMARKS.md). It still passes the auth
 * hook as a `public` route.
 */
export function installHealthRoute(instance: FastifyInstance, deps: { log: CommandLoop; clock: Clock; runtime: Runtime }): void {
  const config: RouteAuth = { auth: 'public' };
  instance.get('/health', { config }, async (_request, reply): Promise<HealthBody> => {
    void reply.header('Cache-Control', 'no-store');
    return {
      status: 'ok',
      version: deps.runtime.version,
      clients: deps.log.models.connections.count(),
      sessions: deps.log.models.sessions.count(deps.clock.now()),
    };
  });
}
