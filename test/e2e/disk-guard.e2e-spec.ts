import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DiskSpace } from '../../apps/relay/src/common/loop/disk-guard';
import { bearer, nextCode, pairPhone, readEvents, registerCode, startRelay, type TestRelay } from '../support/harness';
import { call, REMOTE, type Json } from '../support/http';
import { FakeDesktop } from '../support/desktop';

const MiB = 1024 * 1024;

/**
 * A disk that fills up must not stop the relay mid-write (a failed append is fatal by design): below the
 * reserve it refuses new work with 503 `relay.disk_low` (a socket frame: its channel's error), says so in
 * /health, still writes what keeps it safe (revocations, expiries) and takes work again when space returns.
 * The free space is simulated (the guard's statfs source is injected); everything else is real.
 */
describe('the disk guard: no new work when the disk is almost full', () => {
  let relay: TestRelay;
  let space: DiskSpace = { freeBytes: 50_000 * MiB, totalBytes: 100_000 * MiB };
  let reads = 0;
  const setFree = async (freeBytes: number) => {
    space = { ...space, freeBytes };
    await relay.disk.refresh();
  };
  beforeAll(async () => {
    relay = await startRelay({
      diskSpace: async () => {
        reads++;
        return space;
      },
    });
  });
  afterAll(() => relay.close('test done'));

  const health = async () => (await call(relay, 'GET', '/health')).body;
  const upload = (token: string, bytes: number) => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(bytes, 1)], { type: 'application/octet-stream' }), 'big.bin');
    return fetch(`${relay.url}/media/upload`, { method: 'POST', headers: bearer(token), body: form });
  };

  it('with room: /health says how much is free and that work is taken; free space is read off the request path', async () => {
    expect((await health()).disk).toMatchObject({ free_bytes: 50_000 * MiB, total_bytes: 100_000 * MiB, min_free_bytes: 256 * MiB, low: false });
    const before = reads;
    for (let i = 0; i < 5; i++) await call(relay, 'POST', '/pairing/register', { code: nextCode() });
    expect(reads).toBe(before);
  });

  it('below the reserve: pairing, uploads, socket reports and messages get relay.disk_low; revoke and expiry are still written; then space returns', async () => {
    const keeper = await pairPhone(relay, { device: { device_name: 'Keeper' } });
    const doomed = await pairPhone(relay, { device: { device_name: 'Lost phone' } });
    const shortLived = await pairPhone(relay, { terms: { ttl_seconds: 3600 }, device: { device_name: 'Short' } });
    const desk = await FakeDesktop.pair(relay, { grants: { desktop: '7d' } });
    const seq = readEvents(relay.home).length;
    await setFree(100 * MiB);
    await setFree(90 * MiB); // still low: no second warning
    const h = await health();
    expect(h.status).toBe('ok');
    expect(h.disk).toMatchObject({ free_bytes: 90 * MiB, low: true });
    expect(relay.logs.filter((l) => l.includes('disk almost full'))).toHaveLength(1);

    // HTTP: 503 with the code, the reserve and what is free; nothing written.
    const refused = async (method: string, url: string, body?: unknown, headers?: Record<string, string>) => {
      const r = await call(relay, method, url, body, headers);
      expect([url, r.status]).toEqual([url, 503]);
      expect(r.body).toMatchObject({ ok: false, code: 'relay.disk_low', error: expect.stringContaining('almost full'), free_bytes: 90 * MiB });
    };
    await refused('POST', '/pairing/register', { code: nextCode() });
    await refused('POST', '/pairing/mint', {});
    await refused(
      'POST',
      '/media/upload',
      { file_name: 'a.txt', content_type: 'text/plain', content: Buffer.from('hi').toString('base64') },
      {
        ...bearer(keeper.token),
        ...REMOTE,
      },
    );
    // A file is refused before its body is read (it would land on the disk first).
    const owned = path.join(relay.home, 'relay', 'media-owned');
    const ownedBefore = fs.existsSync(owned) ? fs.readdirSync(owned).length : 0;
    const big = await upload(keeper.token, 2 * MiB);
    expect(big.status).toBe(503);
    expect(big.headers.get('retry-after')).toBe('60');
    expect(((await big.json()) as Json).code).toBe('relay.disk_low');
    expect(fs.existsSync(owned) ? fs.readdirSync(owned).length : 0).toBe(ownedBefore);
    // A phone socket: reports and notifications get their channel's error with the code; the socket stays.
    keeper.phone.send('notifications', 'notification.posted', { package_name: 'com.x', title: 't', text: 'x' }, 'n1');
    expect((await keeper.phone.next((f) => f.id === 'n1')).payload).toMatchObject({ code: 'relay.disk_low' });
    desk.status();
    expect((await desk.phone.type('desktop', 'desktop.error')).payload).toMatchObject({ code: 'relay.disk_low' });
    keeper.phone.send('system', 'ping', { ts: 1 }, 'alive');
    expect((await keeper.phone.next((f) => f.id === 'alive')).type).toBe('pong');
    // A new phone cannot pair (its code cannot be registered, and no session can be made).
    expect((await registerCode(relay, nextCode())).status).toBe(503);

    // What keeps the relay safe is still written: a revocation (the socket is closed) and an expiry.
    const rv = await call(relay, 'DELETE', `/sessions/${doomed.prefix}`, undefined, { ...bearer(keeper.token), ...REMOTE });
    expect(rv).toMatchObject({ status: 200, body: { ok: true, revoked: doomed.prefix } });
    expect(await doomed.phone.closed).toBeGreaterThanOrEqual(4000);
    relay.clock.advance(2 * 3600 * 1000);
    await relay.sweep();
    await relay.loop.drain();
    const whileLow = readEvents(relay.home).slice(seq);
    expect(whileLow.filter((e) => e.type === 'session.revoked').map((e) => e.data.tokenPrefix)).toEqual([doomed.prefix]);
    expect(whileLow.filter((e) => e.type === 'session.expired').map((e) => e.data.tokenPrefix)).toContain(shortLived.prefix);
    const adding = ['pairing.code_registered', 'session.created', 'media.uploaded', 'notification.posted', 'desktop.client_reported'];
    expect(whileLow.filter((e) => adding.includes(e.type))).toEqual([]);
    // The figures are the operator's (loopback, no path in them); anyone else learns only that the disk is low.
    expect(JSON.stringify(h.disk)).not.toContain(relay.home);
    expect((await call(relay, 'GET', '/health', undefined, REMOTE)).body.disk).toEqual({ low: true });

    // Space comes back: one line says so, and work is taken again.
    await setFree(2_000 * MiB);
    expect((await health()).disk).toMatchObject({ low: false, free_bytes: 2_000 * MiB });
    expect(relay.logs.filter((l) => l.includes('disk space is back'))).toHaveLength(1);
    expect((await registerCode(relay, nextCode())).status).toBe(200);
    expect((await upload(keeper.token, 1024)).status).toBe(200);
    desk.status();
    desk.phone.send('system', 'ping', { ts: 1 }, 'after');
    await desk.phone.next((f) => f.id === 'after');
    await new Promise((r) => setTimeout(r, 1200)); // the refused report opened its one-second window
    await relay.loop.drain();
    expect(readEvents(relay.home).some((e) => e.type === 'desktop.client_reported')).toBe(true);
    for (const p of [keeper, shortLived]) p.phone.close();
    desk.close();
  });

  it('a free-space read that fails is reported once and guards nothing (unknown is not low)', async () => {
    const h = await startRelay({
      diskSpace: async () => {
        throw new Error('statfs: not supported here');
      },
    });
    try {
      await h.disk.refresh();
      await h.disk.refresh();
      expect(h.logs.filter((l) => l.includes('free space unknown'))).toHaveLength(1);
      expect((await call(h, 'POST', '/pairing/register', { code: nextCode() })).status).toBe(200);
    } finally {
      await h.close('test done');
    }
  });

  it('RELAY_DISK_MIN_FREE_MB=0 turns the guard off: no reads, no disk in /health', async () => {
    let n = 0;
    const h = await startRelay({
      env: { RELAY_DISK_MIN_FREE_MB: '0' },
      diskSpace: async () => {
        n++;
        return { freeBytes: 0, totalBytes: 1 };
      },
    });
    try {
      expect((await call(h, 'GET', '/health')).body.disk).toBeUndefined();
      expect((await call(h, 'POST', '/pairing/register', { code: nextCode() })).status).toBe(200);
      expect(n).toBe(0);
    } finally {
      await h.close('test done');
    }
  });
});
