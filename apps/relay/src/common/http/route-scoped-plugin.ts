import type { FastifyInstance, FastifyPluginCallback, FastifyPluginOptions, RouteOptions } from 'fastify';

/** The hooks Fastify runs per request, which a route can carry itself. */
const ROUTE_HOOKS = [
  'onRequest',
  'preParsing',
  'preValidation',
  'preHandler',
  'preSerialization',
  'onSend',
  'onResponse',
  'onTimeout',
  'onError',
  'onRequestAbort',
] as const;
type HookName = (typeof ROUTE_HOOKS)[number];
const isRouteHook = (name: string): name is HookName => (ROUTE_HOOKS as readonly string[]).includes(name);

/**
 * Registers a Fastify plugin whose request hooks only some routes need. Its decorators and content-type parsers go
 * on the whole instance as usual; each request hook it adds goes only on the routes `wants` picks, as a route-level
 * hook (Fastify runs those after the global ones). Every other request skips them: @fastify/multipart's two async
 * hooks cost every request about a tenth of a `GET /health` (docs/BENCHMARKS.md, "What a `GET /health` costs").
 *
 * Call it before any route is registered (a Nest provider's constructor runs before Nest registers routes): a route
 * registered earlier would not get the hooks. A hook that is not per request (onRoute, onReady, onClose) is added to
 * the instance as the plugin asked. The plugin runs at once and must be synchronous (call `done` before returning).
 */
export function registerWithRouteHooks<O extends FastifyPluginOptions>(
  instance: FastifyInstance,
  plugin: FastifyPluginCallback<O>,
  opts: O,
  wants: (route: RouteOptions) => boolean,
): void {
  const hooks: Array<[HookName, unknown]> = [];
  const capturing: FastifyInstance = new Proxy(instance, {
    get(target, prop) {
      if (prop === 'addHook')
        return (name: string, fn: unknown) => {
          if (isRouteHook(name)) hooks.push([name, fn]);
          else (target.addHook as (n: string, f: unknown) => unknown)(name, fn);
          return capturing;
        };
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  let finished = false;
  plugin(capturing, opts, (err?: Error) => {
    if (err) throw err;
    finished = true;
  });
  if (!finished) throw new Error('registerWithRouteHooks: the plugin did not finish synchronously');
  instance.addHook('onRoute', (route: RouteOptions) => {
    if (!wants(route)) return;
    const r = route as unknown as Record<HookName, unknown>;
    for (const [name, fn] of hooks) {
      const had = r[name];
      r[name] = had === undefined ? [fn] : Array.isArray(had) ? [...(had as unknown[]), fn] : [had, fn];
    }
  });
}
