import * as http from 'node:http';
import * as net from 'node:net';
import { pairPhone, startRelay, type TestRelay } from '../support/harness';

/** A raw TCP client: `opened` when connected, `ended` with the bytes received and when the relay closed it. */
function rawClient(port: number, localAddress = '127.0.0.1') {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  let data = '';
  socket.on('data', (d) => (data += d.toString()));
  socket.on('error', () => undefined);
  const opened = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const ended = new Promise<{ data: string; at: number }>((resolve) => socket.once('close', () => resolve({ data, at: Date.now() })));
  return { socket, opened, ended };
}

function get(port: number, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/health', localAddress, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
  });
}

describe('slow clients', () => {
  describe('headers that trickle in', () => {
    let relay: TestRelay;
    let port: number;
    beforeAll(async () => {
      relay = await startRelay({ config: { headersTimeoutMs: 300 } });
      port = Number(new URL(relay.url).port);
    });
    afterAll(() => relay.close('test done'));

    it('are cut at the headers bound (here 300 ms), with 408, even while bytes keep coming', async () => {
      // Timed from before the connection: the relay's bound runs from its accept, so a start taken after
      // `opened` can miss a loaded machine's delay there and see the cut early.
      const start = Date.now();
      const c = rawClient(port);
      await c.opened;
      c.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const drip = setInterval(() => c.socket.writable && c.socket.write('X-Slow: 1\r\n'), 50);
      const { data, at } = await c.ended;
      clearInterval(drip);
      expect(at - start).toBeGreaterThanOrEqual(250);
      expect(at - start).toBeLessThan(2_000);
      expect(data).toMatch(/^HTTP\/1\.1 408/);
      // In the relay's error shape, not Fastify's.
      expect(JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4))).toEqual({ ok: false, error: expect.any(String), code: 'request_timeout' });
    });

    it('a prompt request is unaffected', async () => {
      expect(await get(port, '127.0.0.1')).toBe(200);
    });
  });

  describe('many connections from one address that have not sent their headers', () => {
    let relay: TestRelay;
    let port: number;
    beforeAll(async () => {
      relay = await startRelay({ config: { maxSlowConnectionsPerAddress: 16 } });
      port = Number(new URL(relay.url).port);
    });
    afterAll(() => relay.close('test done'));

    it('are capped per address: the 17th is closed at once, other addresses are served', async () => {
      const slow = Array.from({ length: 16 }, () => rawClient(port, '127.0.9.1'));
      await Promise.all(slow.map((c) => c.opened));
      for (const c of slow) c.socket.write('GET /health HTTP/1.1\r\n');
      const extra = rawClient(port, '127.0.9.1');
      const { data } = await extra.ended;
      expect(data).toBe('');
      expect(await get(port, '127.0.9.2')).toBe(200);
      // Not one of the 16 was touched by the refusal.
      expect(slow.every((c) => !c.socket.destroyed)).toBe(true);
      for (const c of slow) c.socket.destroy();
      await Promise.all(slow.map((c) => c.ended));
      // Once the relay has seen them go (their close reaches it a moment after ours), the address is served again.
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) status = await get(port, '127.0.9.1').catch(() => 0);
      expect(status).toBe(200);
    });
  });

  describe('a body that trickles in (whole request bound 1 s)', () => {
    let relay: TestRelay;
    let port: number;
    beforeAll(async () => {
      relay = await startRelay({ config: { headersTimeoutMs: 300, requestTimeoutMs: 1_000 } });
      port = Number(new URL(relay.url).port);
    });
    afterAll(() => relay.close('test done'));

    it('is cut at the request bound with 408 request_timeout, and writes no event', async () => {
      await relay.loop.drain();
      const before = relay.loop.lastSeq;
      const body = JSON.stringify({ device_name: 'slow'.repeat(50) });
      const start = Date.now(); // before the connection, as above
      const c = rawClient(port);
      await c.opened;
      c.socket.write(`POST /pairing HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      let i = 0;
      const drip = setInterval(() => c.socket.writable && i < body.length && c.socket.write(body[i++]), 40);
      const { data, at } = await c.ended;
      clearInterval(drip);
      expect(data).toMatch(/^HTTP\/1\.1 408/);
      expect(JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4))).toMatchObject({ ok: false, code: 'request_timeout' });
      expect(at - start).toBeGreaterThanOrEqual(900);
      expect(at - start).toBeLessThan(4_000);
      await relay.loop.drain();
      expect(relay.loop.lastSeq).toBe(before);
    });

    it('a phone socket outlives both bounds (an upgraded socket is no longer a request)', async () => {
      const { phone } = await pairPhone(relay);
      await new Promise((r) => setTimeout(r, 1_500)); // past both bounds, on purpose
      phone.send('system', 'ping', { ts: 7 }, 'late');
      expect((await phone.next((f) => f.id === 'late')).type).toBe('pong');
      phone.close();
    });
  });
});
