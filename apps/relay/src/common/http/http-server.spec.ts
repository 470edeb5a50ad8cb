import Fastify from 'fastify';
import { lazyCompilers } from './http-server';

describe('the lazily loaded schema compilers', () => {
  it('a route that does carry a Fastify schema is still validated and serialized by it', async () => {
    const app = Fastify({ schemaController: { compilersFactory: lazyCompilers() } });
    app.post(
      '/t',
      {
        schema: {
          body: { type: 'object', required: ['a'], properties: { a: { type: 'number' } } },
          response: { 200: { type: 'object', properties: { a: { type: 'number' } } } },
        },
      },
      async (req) => ({ a: (req.body as { a: number }).a, secret: 'dropped by the serializer' }),
    );
    const bad = await app.inject({ method: 'POST', url: '/t', payload: { a: 'x' } });
    expect(bad.statusCode).toBe(400);
    const ok = await app.inject({ method: 'POST', url: '/t', payload: { a: 2 } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ a: 2 });
    await app.close();
  });
});
