import { ReadModels } from '@svc/domain';
import { eventsDir, replayLog } from '@svc/events';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { MEDIA_REGISTRAR, type MediaRegistrar } from '../../apps/relay/src/common/media-registrar';
import { bearer, pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** Response bodies are read as loosely typed JSON; the assertions check their shape. */
type Json = any;

/** The registry's lifecycle: TTL and LRU over the injected clock, owned files, restart, replay. */
describe('media registry', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-media-reg-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, content = name): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, content);
    return p;
  };
  const register = async (relay: TestRelay, p: string): Promise<string> => {
    const res = await fetch(`${relay.url}/media/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: p, content_type: 'text/plain' }),
    });
    if (res.status !== 200) throw new Error(`register ${res.status}`);
    return ((await res.json()) as Json).token;
  };
  const upload = async (relay: TestRelay, token: string, content: string): Promise<{ token: string; path: string }> => {
    const form = new FormData();
    form.append('file', new Blob([content]), 'up.txt');
    const res = await fetch(`${relay.url}/media/upload`, { method: 'POST', headers: bearer(token), body: form });
    if (res.status !== 200) throw new Error(`upload ${res.status} ${await res.text()}`);
    const body = (await res.json()) as Json;
    const ev = readEvents(relay.home)
      .filter((e) => e.type === 'media.uploaded')
      .at(-1)!;
    return { token: body.token, path: ev.data.path as string };
  };
  const status = async (relay: TestRelay, token: string, media: string): Promise<number> => {
    const res = await fetch(`${relay.url}/media/${media}`, { headers: bearer(token) });
    await res.arrayBuffer();
    return res.status;
  };
  const retired = (relay: TestRelay, p: string) => readEvents(relay.home).filter((e) => e.type === 'media.retired' && e.data.path === p);

  describe('TTL and LRU', () => {
    let relay: TestRelay;
    let token: string;
    beforeEach(async () => {
      relay = await startRelay({ env: { RELAY_MEDIA_TTL_SECONDS: '3600', RELAY_MEDIA_LRU_CAP: '3' } });
      const paired = await pairPhone(relay, { terms: { ttl_seconds: 30 * 86_400 } });
      paired.phone.close();
      token = paired.token;
    });
    afterEach(() => relay.close());

    it('entries expire after RELAY_MEDIA_TTL_SECONDS on the injected clock', async () => {
      const t = await register(relay, write('ttl.txt'));
      relay.clock.advanceSeconds(3599);
      await relay.sweep();
      expect(await status(relay, token, t)).toBe(200);
      relay.clock.advanceSeconds(1);
      await relay.sweep();
      expect(await status(relay, token, t)).toBe(404);
      expect(readEvents(relay.home).filter((e) => e.type === 'media.expired')).toEqual([
        expect.objectContaining({ actor: 'system', data: expect.objectContaining({ tokenPrefix: t.slice(0, 8), ownedPath: null }) }),
      ]);
      expect(((await (await fetch(`${relay.url}/media/inspect`)).json()) as Json).count).toBe(0);
      expect(fs.existsSync(path.join(dir, 'ttl.txt'))).toBe(true);
    });

    it('an owned upload is deleted from disk when its token expires', async () => {
      const up = await upload(relay, token, 'uploaded bytes');
      expect(fs.existsSync(up.path)).toBe(true);
      relay.clock.advanceSeconds(3600);
      await relay.sweep();
      await waitFor(() => retired(relay, up.path).length > 0);
      expect(fs.existsSync(up.path)).toBe(false);
      expect(retired(relay, up.path)[0].data).toMatchObject({ reason: 'released', deleted: true });
      expect(await status(relay, token, up.token)).toBe(404);
    });

    it('beyond RELAY_MEDIA_LRU_CAP the least recently used entry is evicted', async () => {
      const a = await register(relay, write('a.txt'));
      const b = await register(relay, write('b.txt'));
      const c = await register(relay, write('c.txt'));
      relay.clock.advanceSeconds(10);
      expect(await status(relay, token, a)).toBe(200); // a is now more recently used than b
      const d = await register(relay, write('d.txt'));
      expect(await status(relay, token, b)).toBe(404);
      for (const t of [a, c, d]) expect(await status(relay, token, t)).toBe(200);
      const evicted = readEvents(relay.home).filter((e) => e.type === 'media.evicted');
      expect(evicted).toEqual([expect.objectContaining({ data: expect.objectContaining({ tokenPrefix: b.slice(0, 8), cap: 3 }) })]);
      // The fetches above used a, then c, then d: a is now the least recently used.
      const e = await register(relay, write('e.txt'));
      expect(await status(relay, token, a)).toBe(404);
      expect(await status(relay, token, e)).toBe(200);
      expect(((await (await fetch(`${relay.url}/media/inspect`)).json()) as Json).count).toBe(3);
    });

    it('an owned file named by two tokens is deleted only when the last one retires', async () => {
      const registrar = relay.app.get<symbol, MediaRegistrar>(MEDIA_REGISTRAR);
      const shot = path.join(registrar.ownedDir(), 'screenshot-1.png');
      fs.writeFileSync(shot, 'png');
      const o1 = await registrar.registerOwned({ path: shot, contentType: 'image/png', fileName: 'screen.png' }, 'system');
      const o2 = await registrar.registerOwned({ path: shot, contentType: 'image/png', fileName: 'screen.png' }, 'system');
      await register(relay, write('x.txt'));
      await register(relay, write('y.txt')); // evicts o1
      await relay.sweep();
      expect(await status(relay, token, o1.token)).toBe(404);
      expect(fs.existsSync(shot)).toBe(true);
      expect(await status(relay, token, o2.token)).toBe(200);
      await register(relay, write('z.txt')); // evicts x (o2 was just used)
      await register(relay, write('w.txt')); // evicts y
      await register(relay, write('v.txt')); // evicts o2
      await waitFor(() => retired(relay, shot).length > 0);
      expect(fs.existsSync(shot)).toBe(false);
      expect(retired(relay, shot)).toHaveLength(1);
    });
  });

  describe('the MEDIA_REGISTRAR seam and chat markers', () => {
    let relay: TestRelay;
    let token: string;
    let registrar: MediaRegistrar;
    beforeAll(async () => {
      relay = await startRelay();
      const paired = await pairPhone(relay);
      paired.phone.close();
      token = paired.token;
      registrar = relay.app.get<symbol, MediaRegistrar>(MEDIA_REGISTRAR);
    });
    afterAll(() => relay?.close());

    it('ownedDir is private to the relay and files written there become owned media', async () => {
      const owned = registrar.ownedDir();
      expect(fs.statSync(owned).mode & 0o777).toBe(0o700);
      const p = path.join(owned, 'attachment.bin');
      fs.writeFileSync(p, 'attachment');
      const r = await registrar.registerOwned(
        { path: p, contentType: 'application/octet-stream', fileName: 'attachment.bin', sensitive: true },
        'system',
      );
      expect(r.expiresAt).toBe(Math.floor(relay.clock.now().getTime() / 1000) + 86_400);
      const res = await fetch(`${relay.url}/media/${r.token}`, { headers: bearer(token) });
      expect(await res.text()).toBe('attachment');
      expect(res.headers.get('x-media-sensitive')).toBe('1');
      const ev = readEvents(relay.home)
        .filter((e) => e.type === 'media.registered')
        .at(-1)!;
      expect(ev.data).toMatchObject({ owned: true, source: 'registrar', sensitive: true });
    });

    it('registerPath applies the media policy; registerOwned only takes files from ownedDir', async () => {
      await expect(registrar.registerPath({ path: '/etc/passwd' }, 'system')).rejects.toMatchObject({ code: 'media.denied_path', kind: 'forbidden' });
      await expect(registrar.registerOwned({ path: write('outside.txt'), contentType: 'text/plain', fileName: 'o' }, 'system')).rejects.toMatchObject(
        { code: 'media.not_owned' },
      );
      const r = await registrar.registerPath({ path: write('shared.txt', 'shared') }, 'system');
      expect(await (await fetch(`${relay.url}/media/${r.token}`, { headers: bearer(token) })).text()).toBe('shared');
    });

    it('POST /media/markers turns path markers into token markers', async () => {
      const a = write('chart.png', 'chart');
      const b = write('Screen Shot 1.png', 'shot');
      const text = `Here: MEDIA:${a}. And MEDIA:"${b}" plus MEDIA:/etc/passwd and MEDIA:svc-relay://AAAAAAAAAAAAAAAAAAAAAA`;
      const res = await fetch(`${relay.url}/media/markers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      });
      const body = (await res.json()) as Json;
      expect(res.status).toBe(200);
      expect(body.registered).toHaveLength(2);
      const [ta, tb] = body.registered.map((r: { token: string }) => r.token);
      expect(body.text).toBe(
        `Here: MEDIA:svc-relay://${ta}. And MEDIA:svc-relay://${tb} plus MEDIA:/etc/passwd and MEDIA:svc-relay://AAAAAAAAAAAAAAAAAAAAAA`,
      );
      expect(body.failed).toEqual([{ path: '/etc/passwd', code: 'media.denied_path', error: expect.any(String) }]);
      const got = await fetch(`${relay.url}/media/${tb}`, { headers: bearer(token) });
      expect(await got.text()).toBe('shot');
      expect(got.headers.get('content-disposition')).toBe('inline; filename="Screen Shot 1.png"');
    });
  });

  describe('transfers', () => {
    let relay: TestRelay;
    let token: string;
    let big: string;
    let t: string;
    beforeEach(async () => {
      relay = await startRelay();
      const paired = await pairPhone(relay);
      paired.phone.close();
      token = paired.token;
      big = write('big-transfer.bin', '');
      fs.writeFileSync(big, Buffer.alloc(48 * 1024 * 1024, 7));
      t = await register(relay, big);
    });
    afterEach(() => relay.close());

    /** Descriptors of this process (the relay runs in it) open on the big file. */
    const openFiles = () =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === fs.realpathSync(big);
        } catch {
          return false;
        }
      }).length;
    /** Starts a download, reads its first chunk, and hands back the request (the client's socket). */
    const startDownload = () =>
      new Promise<http.ClientRequest>((resolve, reject) => {
        const req = http.get(`${relay.url}/media/${t}`, { headers: bearer(token) }, (res) => res.once('data', () => (res.pause(), resolve(req))));
        req.on('error', reject);
      });

    it('a client that disconnects mid-download leaves no open file behind, and the next fetch works', async () => {
      const req = await startDownload();
      expect(openFiles()).toBe(1);
      req.on('error', () => undefined);
      req.destroy();
      await waitFor(() => openFiles() === 0);
      const again = await fetch(`${relay.url}/media/${t}`, { headers: { ...bearer(token), range: 'bytes=-4' } });
      expect(again.status).toBe(206);
      expect(Buffer.from(await again.arrayBuffer())).toEqual(Buffer.alloc(4, 7));
      // The client has every byte before the relay closes the file: wait for it rather than race it.
      await waitFor(() => openFiles() === 0);
    });

    it('a client that stalls mid-download does not hold up an orderly shutdown', async () => {
      const req = await startDownload(); // paused: the relay's writes stop being taken
      req.on('error', () => undefined);
      const started = Date.now();
      await relay.close();
      expect(Date.now() - started).toBeLessThan(3000);
      expect(openFiles()).toBe(0);
      req.destroy();
    });
  });

  describe('restart and shutdown', () => {
    it('restart forgets every token; owned files go at orderly shutdown and strays at start', async () => {
      let relay = await startRelay();
      const { phone, token } = await pairPhone(relay, { terms: { ttl_seconds: 30 * 86_400 } });
      phone.close();
      const hostFile = write('host.txt', 'host');
      const hostToken = await register(relay, hostFile);
      const up = await upload(relay, token, 'phone bytes');
      const stray = path.join(relay.app.get<symbol, MediaRegistrar>(MEDIA_REGISTRAR).ownedDir(), 'upload-left-by-a-crash.part');
      fs.writeFileSync(stray, 'partial');
      const home = relay.home;

      relay = await relay.restart();
      try {
        expect(await status(relay, token, hostToken)).toBe(404);
        expect(await status(relay, token, up.token)).toBe(404);
        expect(fs.existsSync(up.path)).toBe(false);
        expect(fs.existsSync(stray)).toBe(false);
        expect(fs.existsSync(hostFile)).toBe(true);
        const events = readEvents(home);
        expect(retired(relay, up.path)).toEqual([expect.objectContaining({ data: expect.objectContaining({ reason: 'shutdown', deleted: true }) })]);
        expect(retired(relay, stray)).toEqual([expect.objectContaining({ data: expect.objectContaining({ reason: 'restart', deleted: true }) })]);
        const stopping = events.findIndex((e) => e.type === 'relay.stopping');
        expect(events.findIndex((e) => e.type === 'media.retired' && e.data.path === up.path)).toBeLessThan(stopping);
        expect(((await (await fetch(`${relay.url}/media/inspect`)).json()) as Json).count).toBe(0);
        // The session survived the restart: only media is ephemeral.
        const fresh = await register(relay, hostFile);
        expect(await status(relay, token, fresh)).toBe(200);
      } finally {
        await relay.close();
      }
    });

    it('replaying the log rebuilds the same registry; a replay across a restart is empty', async () => {
      const relay = await startRelay({ env: { RELAY_MEDIA_LRU_CAP: '2' } });
      const { phone, token } = await pairPhone(relay);
      phone.close();
      const t1 = await register(relay, write('r1.txt'));
      await register(relay, write('r2.txt'));
      await status(relay, token, t1);
      await fetch(`${relay.url}/media/${t1}/sensitive`, { method: 'POST' });
      await register(relay, write('r3.txt'));
      await upload(relay, token, 'replayed');
      relay.clock.advanceSeconds(60);
      const live = relay.loop.models.media.snapshot();
      const replayed = new ReadModels();
      replayLog(eventsDir(relay.home), replayed);
      expect(replayed.media.snapshot()).toEqual(live);
      expect(live.entries).toHaveLength(2);
      const restarted = await relay.restart();
      const after = new ReadModels();
      replayLog(eventsDir(restarted.home), after);
      expect(after.media.snapshot()).toEqual({ entries: [] });
      await restarted.close();
    });
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
