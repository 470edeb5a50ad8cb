import { consumeCode, grantDurations, registerCode } from '@svc/domain';
import Fastify, { type FastifyInstance } from 'fastify';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { installAuthHook } from './auth-hook';
import type { AuthedRequest } from './auth';
import { ManualClock } from './clock';
import { CommandLoop } from './command-loop';
import { fileStore } from './file-store';
import { toErrorResponse } from './http-errors';
import { Secrets } from './secrets';

/**
 * The auth classes on a bare Fastify with a real event log: `paired` with a grant and
 * `loopback-or-paired` have no route in the spine yet, but every later feature leans on them.
 */
describe('auth hook', () => {
  let dir: string;
  let app: FastifyInstance;
  let loop: CommandLoop;
  const clock = new ManualClock('2026-03-01T00:00:00.000Z');
  const TOKEN = 'tok0ABCD' + 'x'.repeat(35);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-auth-'));
    const secrets = Secrets.load(dir);
    const logger = pino({ level: 'silent' });
    loop = await CommandLoop.open({
      store: fileStore(dir, 1 << 20),
      secrets,
      clock,
      logger,
      snapshotEvery: 1000,
      onFatal: (e) => {
        throw e;
      },
    });
    const terms = { sessionTtlSeconds: 86_400, grants: grantDurations({ terminal: 3600, bridge: false }), transportHint: null };
    await loop.run('operator', (m, now) => registerCode(m, { codeDigest: secrets.digest('CODE01'), source: 'register', terms }, now));
    await loop.run('public:1', (m, now) =>
      consumeCode(
        m,
        {
          codeDigest: secrets.digest('CODE01'),
          tokenDigest: secrets.digest(TOKEN),
          tokenPrefix: TOKEN.slice(0, 8),
          device: { deviceId: 'd', deviceName: 'D', deviceModel: null, devicePlatform: null },
          ip: '1',
        },
        now,
      ),
    );
    app = Fastify();
    const guard = installAuthHook(app, { loop, secrets, clock, logger, port: () => 8767 });
    app.setErrorHandler((err, _req, reply) => {
      const { status, body } = toErrorResponse(err);
      void reply.status(status).send(body);
    });
    const who = (req: unknown) => ({ principal: (req as AuthedRequest).principal ?? null });
    app.get('/either', { config: { auth: 'loopback-or-paired', grant: 'terminal' } }, async (req) => who(req));
    app.get('/bridge', { config: { auth: 'paired', grant: 'bridge' } }, async (req) => who(req));
    app.get('/term', { config: { auth: 'paired', grant: 'terminal' } }, async (req) => who(req));
    app.get('/public', { config: { auth: 'public' } }, async (req) => who(req));
    app.get('/forgotten', async () => 'x');
    await app.ready();
    expect(guard.unguarded).toEqual(['GET /forgotten']);
  });
  afterAll(async () => {
    await app.close();
    await loop.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const get = (url: string, remoteAddress: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url, remoteAddress, headers });
  const auth = { authorization: `Bearer ${TOKEN}` };

  it('loopback-or-paired: the operator on loopback needs no bearer', async () => {
    const res = await get('/either', '127.0.0.1');
    expect(res.json()).toEqual({ principal: { kind: 'operator' } });
  });

  it('loopback-or-paired: a remote peer needs the bearer and the grant', async () => {
    expect((await get('/either', '10.0.0.1')).statusCode).toBe(401);
    expect((await get('/either', '10.0.0.1', auth)).json()).toMatchObject({ principal: { kind: 'device', tokenPrefix: TOKEN.slice(0, 8) } });
  });

  it('loopback-or-paired: a loopback request with a proxy header is remote, so it needs the bearer', async () => {
    expect((await get('/either', '127.0.0.1', { 'x-forwarded-for': '8.8.8.8' })).statusCode).toBe(401);
    expect((await get('/either', '127.0.0.1', { 'x-forwarded-for': '8.8.8.8', ...auth })).statusCode).toBe(200);
  });

  it('paired + grant: 403 grant_required naming the channel when the session lacks it', async () => {
    const res = await get('/bridge', '10.0.0.1', auth);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ ok: false, code: 'auth.grant_required', error: expect.stringContaining('bridge'), channel: 'bridge' });
  });

  it('paired + grant: the grant expires on its own (403 after, the session still works elsewhere)', async () => {
    expect((await get('/term', '10.0.0.2', auth)).statusCode).toBe(200);
    clock.advanceSeconds(3600);
    expect((await get('/term', '10.0.0.2', auth)).json()).toMatchObject({ code: 'auth.grant_required', channel: 'terminal' });
    expect((await get('/either', '10.0.0.2', auth)).statusCode).toBe(403);
    expect((await get('/public', '10.0.0.2')).statusCode).toBe(200);
  });

  it('public routes carry no principal', async () => {
    expect((await get('/public', '10.0.0.3', auth)).json()).toEqual({ principal: null });
  });
});
