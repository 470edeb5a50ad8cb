import { fastifyMultipart } from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyPluginCallback } from 'fastify';
import { registerWithRouteHooks } from './route-scoped-plugin';

describe('registerWithRouteHooks', () => {
  let app: FastifyInstance;
  afterEach(() => app.close());

  it('puts the plugin request hooks only on the routes it picks; decorators and parsers stay instance-wide', async () => {
    app = Fastify();
    const seen: string[] = [];
    let ready = 0;
    const plugin: FastifyPluginCallback<{ tag: string }> = (f, opts, done) => {
      f.decorateRequest('tag', opts.tag);
      f.addContentTypeParser('application/x-thing', { parseAs: 'string' }, (_r, body, d) => d(null, { thing: body }));
      f.addHook('onRequest', (req, _reply, d) => {
        seen.push(`req ${req.url}`);
        d();
      });
      f.addHook('onResponse', async (req) => {
        seen.push(`res ${req.url}`);
      });
      f.addHook('onReady', (d) => {
        ready++;
        d();
      });
      done();
    };
    registerWithRouteHooks(app, plugin, { tag: 'T' }, (route) => (route.config as { wanted?: boolean } | undefined)?.wanted === true);
    app.post('/wanted', { config: { wanted: true } }, async (req) => ({ tag: (req as unknown as { tag: string }).tag, body: req.body }));
    app.post('/other', async (req) => ({ tag: (req as unknown as { tag: string }).tag, body: req.body }));
    await app.ready();
    expect(ready).toBe(1);

    const wanted = await app.inject({ method: 'POST', url: '/wanted', headers: { 'content-type': 'application/x-thing' }, payload: 'a' });
    expect(wanted.json()).toEqual({ tag: 'T', body: { thing: 'a' } });
    const other = await app.inject({ method: 'POST', url: '/other', headers: { 'content-type': 'application/x-thing' }, payload: 'b' });
    expect(other.json()).toEqual({ tag: 'T', body: { thing: 'b' } });
    expect(seen).toEqual(['req /wanted', 'res /wanted']);
  });

  it('keeps a route’s own hooks and runs the plugin’s after them', async () => {
    app = Fastify();
    const order: string[] = [];
    registerWithRouteHooks(
      app,
      (f, _o, done) => {
        f.addHook('onRequest', (_q, _r, d) => (order.push('plugin'), d()));
        done();
      },
      {},
      () => true,
    );
    app.get('/', { onRequest: (_q, _r, d) => (order.push('route'), d()) }, async () => ({ ok: true }));
    await app.inject({ url: '/' });
    expect(order).toEqual(['route', 'plugin']);
  });

  it('refuses a plugin that does not finish at once (its hooks would be missed by routes registered meanwhile)', () => {
    app = Fastify();
    expect(() =>
      registerWithRouteHooks(
        app,
        () => undefined,
        {},
        () => true,
      ),
    ).toThrow(/did not finish synchronously/);
  });

  it('@fastify/multipart: an upload route streams its parts; /health-like routes carry none of its hooks', async () => {
    app = Fastify();
    registerWithRouteHooks(app, fastifyMultipart, { limits: { files: 1 } }, (route) => route.url === '/upload');
    app.post('/upload', async (req) => {
      const names: string[] = [];
      for await (const part of req.parts()) {
        if (part.type === 'file') names.push(`${part.filename}:${(await part.toBuffer()).length}`);
      }
      return { names };
    });
    app.get('/health', async () => ({ status: 'ok' }));
    await app.ready();
    const boundary = 'xyz';
    const payload =
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n` +
      `hello\r\n--${boundary}--\r\n`;
    const res = await app.inject({
      method: 'POST',
      url: '/upload',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload,
    });
    expect(res.json()).toEqual({ names: ['a.bin:5'] });
    const routes = app.printRoutes({ includeHooks: true, commonPrefix: false });
    const health = routes.slice(routes.indexOf('health'));
    expect(health).not.toMatch(/onRequest|onResponse/);
    const upload = routes.slice(routes.indexOf('upload'), routes.indexOf('health') > routes.indexOf('upload') ? routes.indexOf('health') : undefined);
    expect(upload).toMatch(/onRequest/);
    expect(upload).toMatch(/onResponse/);
  });
});
