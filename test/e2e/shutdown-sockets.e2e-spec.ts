import * as net from 'node:net';
import { startRelay } from '../support/harness';

jest.setTimeout(30_000);

/**
 * A browser keeps a spare socket open to a page's host (chromium does, even after a 403), and HTTP/1.1
 * clients keep sockets alive between requests: neither may hold the relay's shutdown for the 120 s
 * connection timeout (it did). Requests in flight get SHUTDOWN_DRAIN_MS, then every socket is cut.
 */
describe('shutdown with sockets that carry nothing', () => {
  it('closes in seconds with a never-used socket and a keep-alive socket open', async () => {
    const relay = await startRelay();
    const port = Number(new URL(relay.url).port);
    const spare = net.connect(port, '127.0.0.1');
    await new Promise((r) => spare.once('connect', r));
    const keptAlive = net.connect(port, '127.0.0.1');
    await new Promise((r) => keptAlive.once('connect', r));
    const answered = new Promise<string>((r) => keptAlive.once('data', (d: Buffer) => r(d.toString())));
    keptAlive.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(await answered).toMatch(/^HTTP\/1\.1 200/);
    const closedBy = (s: net.Socket) => new Promise<void>((r) => s.once('close', () => r()));
    const bothClosed = Promise.all([closedBy(spare), closedBy(keptAlive)]);

    const t = Date.now();
    await relay.close('test');
    expect(Date.now() - t).toBeLessThan(10_000);
    await bothClosed;
  });
});
