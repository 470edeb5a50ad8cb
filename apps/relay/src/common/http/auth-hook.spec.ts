import { consumeCode, grantDurations, registerCode } from '@svc/domain';
import Fastify, { type FastifyInstance } from 'fastify';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { installAuthHook } from './auth-hook';
import type { AuthedRequest } from '../auth/auth';
import { ManualClock } from '../loop/clock';
import { CommandLoop } from '../loop/command-loop';
import { fileStore } from '../loop/file-store';
import { toErrorResponse } from './http-errors';
import { OperatorKey, readOperatorKey } from '../auth/operator-key';
import { Secrets } from '../auth/secrets';

/**
 * The auth classes on a bare Fastify with a real event log and a real operator key file: the same routes
 * under RELAY_LOOPBACK_TRUST=loopback (`app`) and `key` (`strict`).
 */
describe('auth hook', () => {
  let dir: string;
  let app: FastifyInstance;
  let strict: FastifyInstance;
  let loop: CommandLoop;
  let KEY: string;
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
    const operatorKey = OperatorKey.load(dir);
    KEY = readOperatorKey(dir)!;
    const build = async (loopbackTrust: 'loopback' | 'key') => {
      const f = Fastify();
      installAuthHook(f, { loop, secrets, clock, logger, port: () => 8767, operatorKey, loopbackTrust });
      f.setErrorHandler((err, _req, reply) => {
        const { status, body } = toErrorResponse(err);
        void reply.status(status).send(body);
      });
      const who = (req: unknown) => ({ principal: (req as AuthedRequest).principal ?? null });
      f.get('/either', { config: { auth: 'platform-or-paired', grant: 'terminal' } }, async (req) => who(req));
      f.get('/own', { config: { auth: 'operator-or-paired', grant: 'terminal' } }, async (req) => who(req));
      f.get('/operator', { config: { auth: 'operator' } }, async (req) => who(req));
      f.get('/platform', { config: { auth: 'platform', grant: 'terminal' } }, async (req) => who(req));
      f.get('/bridge', { config: { auth: 'paired', grant: 'bridge' } }, async (req) => who(req));
      f.get('/term', { config: { auth: 'paired', grant: 'terminal' } }, async (req) => who(req));
      f.get('/public', { config: { auth: 'public' } }, async (req) => who(req));
      await f.ready();
      return f;
    };
    app = await build('loopback');
    strict = await build('key');
  });
  afterAll(async () => {
    await app.close();
    await strict.close();
    await loop.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const get = (url: string, remoteAddress: string, headers: Record<string, string> = {}, on = app) =>
    on.inject({ method: 'GET', url, remoteAddress, headers });
  const failures = () => loop.models.rateLimit.failuresWithin('::1', 'token', clock.now(), 60);
  const auth = { authorization: `Bearer ${TOKEN}` };

  it('platform-or-paired: the operator on loopback needs no bearer', async () => {
    const res = await get('/either', '127.0.0.1');
    expect(res.json()).toEqual({ principal: { kind: 'operator' } });
  });

  it('platform-or-paired: a remote peer needs the bearer and the grant', async () => {
    expect((await get('/either', '10.0.0.1')).statusCode).toBe(401);
    expect((await get('/either', '10.0.0.1', auth)).json()).toMatchObject({ principal: { kind: 'device', tokenPrefix: TOKEN.slice(0, 8) } });
  });

  it('platform-or-paired: a loopback request with a proxy header is remote, so it needs the bearer', async () => {
    expect((await get('/either', '127.0.0.1', { 'x-forwarded-for': '8.8.8.8' })).statusCode).toBe(401);
    expect((await get('/either', '127.0.0.1', { 'x-forwarded-for': '8.8.8.8', ...auth })).statusCode).toBe(200);
  });

  it('operator: loopback is not enough, the key is (header or bearer); none is 401 and not counted', async () => {
    const none = await get('/operator', '::1');
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ ok: false, code: 'auth.operator_key_required' });
    expect(failures()).toBe(0);
    expect((await get('/operator', '::1', { 'x-operator-key': KEY })).json()).toEqual({ principal: { kind: 'operator' } });
    expect((await get('/operator', '::1', { authorization: `Bearer ${KEY}` })).json()).toEqual({ principal: { kind: 'operator' } });
    // A session bearer is not the operator, and neither is a forgotten console cookie.
    expect((await get('/operator', '::1', auth)).statusCode).toBe(401);
    expect((await get('/operator', '::1', { cookie: `svc_console_8767=${'c'.repeat(43)}` })).statusCode).toBe(401);
  });

  it('operator: the key from another host, or through a proxy, is still refused (403)', async () => {
    expect((await get('/operator', '10.0.0.9', { 'x-operator-key': KEY })).statusCode).toBe(403);
    expect((await get('/operator', '127.0.0.1', { 'x-operator-key': KEY, 'x-forwarded-for': '8.8.8.8' })).statusCode).toBe(403);
  });

  it('operator: a wrong key is counted like a bad bearer; the right key still passes while the address is blocked', async () => {
    const before = failures();
    const wrong = { 'x-operator-key': 'w'.repeat(43) };
    expect((await get('/operator', '::1', wrong)).statusCode).toBe(401);
    expect(failures()).toBe(before + 1);
    while (loop.models.rateLimit.blockedUntil('::1', clock.now()) === null) expect((await get('/operator', '::1', wrong)).statusCode).toBe(401);
    expect(loop.models.rateLimit.blockedUntil('::1', clock.now())).not.toBeNull();
    const blocked = await get('/operator', '::1', { 'x-operator-key': 'w'.repeat(43) });
    expect(blocked.statusCode).toBe(429);
    expect((await get('/operator', '::1', { 'x-operator-key': KEY })).statusCode).toBe(200);
    clock.advanceSeconds(301);
  });

  it('operator-or-paired: on loopback the key or a bearer; neither is 401', async () => {
    expect((await get('/own', '127.0.0.1')).json()).toMatchObject({ code: 'auth.operator_key_required' });
    expect((await get('/own', '127.0.0.1', { 'x-operator-key': KEY })).json()).toEqual({ principal: { kind: 'operator' } });
    expect((await get('/own', '127.0.0.1', auth)).json()).toMatchObject({ principal: { kind: 'device' } });
    expect((await get('/own', '10.0.0.1', auth)).json()).toMatchObject({ principal: { kind: 'device' } });
  });

  it('platform: any loopback caller by default; with RELAY_LOOPBACK_TRUST=key the key or a bearer with the grant', async () => {
    expect((await get('/platform', '127.0.0.1')).json()).toEqual({ principal: { kind: 'operator' } });
    expect((await get('/platform', '10.0.0.1', { 'x-operator-key': KEY })).statusCode).toBe(403);
    expect((await get('/platform', '127.0.0.1', {}, strict)).json()).toMatchObject({ code: 'auth.operator_key_required' });
    expect((await get('/platform', '127.0.0.1', { 'x-operator-key': KEY }, strict)).json()).toEqual({ principal: { kind: 'operator' } });
    expect((await get('/platform', '127.0.0.1', auth, strict)).json()).toMatchObject({ principal: { kind: 'device' } });
    expect((await get('/either', '127.0.0.1', {}, strict)).statusCode).toBe(401);
    expect((await get('/either', '127.0.0.1', auth, strict)).json()).toMatchObject({ principal: { kind: 'device' } });
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

  it('a route without an auth class stops the app at ready, so listen never binds its port', async () => {
    const f = Fastify();
    installAuthHook(f, {
      loop,
      secrets: Secrets.load(dir),
      clock,
      logger: pino({ level: 'silent' }),
      port: () => 8767,
      operatorKey: OperatorKey.load(dir),
      loopbackTrust: 'loopback',
    });
    f.get('/public', { config: { auth: 'public' } }, async () => 'x');
    f.get('/forgotten', async () => 'x');
    await expect(f.listen({ port: 0, host: '127.0.0.1' })).rejects.toThrow(/^routes without @Auth\(\): GET \/forgotten \(/);
    expect(f.server.listening).toBe(false);
    await f.close();
  });
});
