import { startRelay, type TestRelay } from '../support/harness';
import { call, REMOTE } from '../support/http';

/** `:param` (Fastify) as `{param}` (OpenAPI). */
const asOpenApi = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('GET /openapi.json (issue 16): generated from the controllers, checked against every registered route', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close());

  it('describes every HTTP route the relay registered, each operation with a summary; loopback only', async () => {
    const r = await call(relay, 'GET', '/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toMatch(/^3\./);
    const paths = r.body.paths as Record<string, Record<string, { summary?: string }>>;
    const missing: string[] = [];
    for (const { method, url } of relay.routes) {
      if (method === 'OPTIONS' || url === '*' || url.endsWith('/*')) continue;
      // Fastify answers HEAD for every GET route: described by the GET.
      const op = paths[asOpenApi(url)]?.[method === 'HEAD' ? 'get' : method.toLowerCase()];
      if (!op) missing.push(`${method} ${url}`);
      else if (!op.summary) missing.push(`${method} ${url} (no summary)`);
    }
    expect(missing).toEqual([]);
    // The routes the issues built are there, by their spec paths.
    for (const p of [
      '/desktop/{tool}',
      '/api/profiles/{name}/soul',
      '/secure-link/preflight',
      '/usage/providers',
      '/metrics',
      '/relay/info',
      '/pairing/mint',
    ])
      expect(Object.keys(paths)).toContain(p);
    expect(relay.routes.length).toBeGreaterThan(100);
    expect((await call(relay, 'GET', '/openapi.json', undefined, REMOTE)).status).toBe(403);
  });

  it("every body read into a DTO has that DTO's schema, generated from the decorators the relay validates with", async () => {
    const r = await call(relay, 'GET', '/openapi.json');
    type Schema = { type?: string; properties?: Record<string, Record<string, unknown>>; required?: string[]; allOf?: Array<{ $ref: string }> };
    const schemas = r.body.components.schemas as Record<string, Schema>;
    const resolve = (s: Schema): Schema => (s.allOf ? resolve(schemas[s.allOf[0].$ref.split('/').pop()!]) : s);
    const paths = r.body.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { $ref?: string } }> } }>>;
    const refs: string[] = [];
    for (const item of Object.values(paths))
      for (const op of Object.values(item)) {
        const ref = op.requestBody?.content['application/json']?.schema.$ref;
        if (ref) refs.push(ref.split('/').pop()!);
      }
    expect(refs.length).toBeGreaterThanOrEqual(15);
    // No body schema is left empty.
    expect(refs.filter((name) => Object.keys(resolve(schemas[name]).properties ?? {}).length === 0)).toEqual([]);
    // What the validation enforces is what the description says.
    const register = resolve(schemas[(paths['/pairing/register'].post.requestBody!.content['application/json'].schema.$ref ?? '').split('/').pop()!]);
    expect(register.required).toEqual(['code']);
    expect(register.properties!.code).toMatchObject({ type: 'string', minLength: 6, maxLength: 6 });
    expect(register.properties!.ttl_seconds).toMatchObject({ type: 'integer', minimum: 0 });
    const consoleMint = schemas.ConsoleMintDto;
    expect(consoleMint.allOf?.[0].$ref).toBe('#/components/schemas/TermsDto');
  });
});
