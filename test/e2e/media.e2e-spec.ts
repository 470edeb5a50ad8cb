import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { bearer, pairPhone, readEvents, startRelay, type Phone, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** Response bodies are read as loosely typed JSON; the assertions check their shape. */
type Json = any;

/** Spec 4.4 routes and every status of the spec's error table for them, over a real relay. */
describe('media routes', () => {
  const CAP = 1024 * 1024; // RELAY_MEDIA_MAX_SIZE_MB=1
  let relay: TestRelay;
  let phone: Phone;
  let token: string;
  let dir: string;

  const json = (body: unknown, headers: Record<string, string> = {}) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const register = (body: Record<string, unknown>, headers: Record<string, string> = {}) => fetch(`${relay.url}/media/register`, json(body, headers));
  const get = (mediaToken: string, headers: Record<string, string> = {}) =>
    fetch(`${relay.url}/media/${mediaToken}`, { headers: { ...bearer(token), ...headers } });
  const byPath = (p: string, extra = '') => fetch(`${relay.url}/media/by-path?path=${encodeURIComponent(p)}${extra}`, { headers: bearer(token) });
  const write = (name: string, content: string | Buffer) => {
    const p = path.join(dir, name);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
    return p;
  };
  const registered = async (p: string, extra: Record<string, unknown> = {}): Promise<string> => {
    const res = await register({ path: p, content_type: 'text/plain', ...extra });
    const body = (await res.json()) as Json;
    if (res.status !== 200) throw new Error(`register ${res.status} ${JSON.stringify(body)}`);
    return body.token;
  };

  beforeAll(async () => {
    relay = await startRelay({ env: { RELAY_MEDIA_MAX_SIZE_MB: '1' } });
    ({ phone, token } = await pairPhone(relay));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-media-e2e-'));
  });
  afterAll(async () => {
    phone.close();
    await relay.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('POST /media/register', () => {
    it('returns an opaque 128-bit token that names no path', async () => {
      const p = write('hello.txt', 'hello world');
      const res = await register({ path: p, content_type: 'text/plain', file_name: 'hello.txt' });
      const body = (await res.json()) as Json;
      expect(res.status).toBe(200);
      expect(body).toEqual({ ok: true, token: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/), expires_at: expect.any(Number), sensitive: false });
      expect(JSON.stringify(body)).not.toContain(dir);
      expect(body.expires_at - Math.floor(relay.clock.now().getTime() / 1000)).toBe(86_400);
    });

    it.each([
      [{}, 'path'],
      [{ path: 'relative/file.txt' }, 'path must be an absolute path'],
      [{ path: 42 }, 'path must be a string'],
      [{ path: '/tmp/x', content_type: 'not a type' }, 'content_type'],
      [{ path: '/tmp/x', file_name: 'a/b.txt' }, 'file_name'],
      [{ path: '/tmp/x', owned_file: 'yes' }, 'owned_file must be true or false'],
      [{ path: '/tmp/x', sensitive: 1 }, 'sensitive must be true or false'],
    ])('400 names the field and why: %j', async (body, message) => {
      const res = await register(body);
      const out = (await res.json()) as Json;
      expect(res.status).toBe(400);
      expect(out.ok).toBe(false);
      expect(out.error).toContain(message);
    });

    it("400 for owned_file outside the relay's own media directory", async () => {
      const p = write('not-owned.txt', 'x');
      const res = await register({ path: p, content_type: 'text/plain', owned_file: true });
      expect(res.status).toBe(400);
      expect((await res.json()) as Json).toMatchObject({ code: 'media.not_owned', error: expect.stringContaining('owned_file') });
      expect(fs.existsSync(p)).toBe(true);
    });

    it('403 for a non-loopback caller (a proxied request is not loopback)', async () => {
      const res = await register({ path: write('p.txt', 'x') }, { 'x-forwarded-for': '203.0.113.9' });
      expect(res.status).toBe(403);
      expect((await res.json()) as Json).toMatchObject({ ok: false, code: 'auth.loopback_only' });
    });

    it('applies the file checks, each failure a 400 (spec 4.4/7, as the reference): missing, system path, directory, FIFO, over the cap', async () => {
      const missing = await register({ path: path.join(dir, 'nope.txt') });
      expect(missing.status).toBe(400);
      expect((await missing.json()) as Json).toMatchObject({ ok: false, code: 'media.file_missing' });
      const sys = await register({ path: '/etc/hostname' });
      expect(sys.status).toBe(400);
      expect((await sys.json()) as Json).toMatchObject({ code: 'media.denied_path' });
      const d = path.join(dir, 'a-dir');
      fs.mkdirSync(d);
      const dirRes = await register({ path: d });
      expect(dirRes.status).toBe(400);
      expect((await dirRes.json()) as Json).toMatchObject({ ok: false, code: 'media.not_regular', error: 'not a regular file (a directory)' });
      const fifo = path.join(dir, 'fifo');
      execFileSync('mkfifo', [fifo]);
      const res = await register({ path: fifo });
      expect(res.status).toBe(400);
      expect((await res.json()) as Json).toMatchObject({ code: 'media.not_regular', error: expect.stringContaining('FIFO') });
      const big = write('big.bin', Buffer.alloc(CAP + 1));
      const tooBig = await register({ path: big });
      expect(tooBig.status).toBe(400);
      expect((await tooBig.json()) as Json).toMatchObject({ code: 'media.too_large', max_size: CAP });
    });

    it("refuses the relay's own secrets and event log", async () => {
      for (const p of [
        path.join(relay.home, 'relay', 'secret.key'),
        ...fs.readdirSync(path.join(relay.home, 'relay', 'events')).map((f) => path.join(relay.home, 'relay', 'events', f)),
      ]) {
        const res = await register({ path: p });
        expect(res.status).toBe(400);
        expect(((await res.json()) as Json).code).toBe('media.denied_path');
      }
    });
  });

  describe('GET /media/{token}', () => {
    let t: string;
    const content = 'The quick brown fox jumps over the lazy dog';
    beforeAll(async () => {
      t = await registered(write('fox.txt', content), { file_name: 'Füchse & "Hunde".txt' });
    });

    it('401 without or with a bad bearer, before anything else', async () => {
      expect((await fetch(`${relay.url}/media/${t}`)).status).toBe(401);
      const bad = await fetch(`${relay.url}/media/${t}`, { headers: bearer('x'.repeat(43)) });
      expect(bad.status).toBe(401);
      expect((await bad.json()) as Json).toMatchObject({ ok: false, code: 'auth.invalid_token' });
      expect((await fetch(`${relay.url}/media/AAAAAAAAAAAAAAAAAAAAAA`)).status).toBe(401);
    });

    it('404 for unknown and malformed tokens', async () => {
      const res = await get('AAAAAAAAAAAAAAAAAAAAAA');
      expect(res.status).toBe(404);
      expect((await res.json()) as Json).toMatchObject({ ok: false, code: 'media.not_found' });
      expect((await get('short')).status).toBe(404);
      expect((await get('%2e%2e%2fetc%2fpasswd')).status).toBe(404);
    });

    it('streams with the registered type, safe Content-Disposition, validators and no host path', async () => {
      const res = await get(t);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(content);
      expect(res.headers.get('content-type')).toBe('text/plain');
      expect(res.headers.get('content-length')).toBe(String(content.length));
      expect(res.headers.get('content-disposition')).toBe(
        `inline; filename="F_chse & _Hunde_.txt"; filename*=UTF-8''F%C3%BCchse%20%26%20%22Hunde%22.txt`,
      );
      expect(res.headers.get('accept-ranges')).toBe('bytes');
      expect(res.headers.get('etag')).toMatch(/^"[a-z0-9.]+-[a-z0-9]+-[a-z0-9]+"$/);
      expect(new Date(res.headers.get('last-modified')!).getTime()).toBeGreaterThan(0);
      expect(res.headers.get('x-media-sensitive')).toBeNull();
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      for (const [, v] of res.headers) expect(v).not.toContain(dir);
    });

    it('omits the filename when none was registered', async () => {
      const t2 = await registered(write('anon.bin', 'x'), { content_type: 'application/octet-stream' });
      expect((await get(t2)).headers.get('content-disposition')).toBe('inline');
    });

    it('answers conditional requests with 304', async () => {
      const first = await get(t);
      await first.arrayBuffer();
      const etag = first.headers.get('etag')!;
      const r1 = await get(t, { 'if-none-match': etag });
      expect(r1.status).toBe(304);
      expect(r1.headers.get('etag')).toBe(etag);
      const r2 = await get(t, { 'if-modified-since': first.headers.get('last-modified')! });
      expect(r2.status).toBe(304);
      const r3 = await get(t, { 'if-none-match': '"other"' });
      expect(r3.status).toBe(200);
      await r3.arrayBuffer();
    });

    it('serves byte ranges (206), suffix ranges, and 416 past the end', async () => {
      const r = await get(t, { range: 'bytes=4-8' });
      expect(r.status).toBe(206);
      expect(await r.text()).toBe('quick');
      expect(r.headers.get('content-range')).toBe(`bytes 4-8/${content.length}`);
      expect(r.headers.get('content-length')).toBe('5');
      const suffix = await get(t, { range: 'bytes=-3' });
      expect(suffix.status).toBe(206);
      expect(await suffix.text()).toBe('dog');
      const open = await get(t, { range: `bytes=${content.length - 4}-` });
      expect(await open.text()).toBe('dog'.padStart(4, ' '));
      const past = await get(t, { range: `bytes=${content.length}-` });
      expect(past.status).toBe(416);
      expect(past.headers.get('content-range')).toBe(`bytes */${content.length}`);
      expect((await past.json()) as Json).toMatchObject({ ok: false, code: 'media.range_not_satisfiable' });
      const multi = await get(t, { range: 'bytes=0-1,4-5' });
      expect(multi.status).toBe(200);
      expect(await multi.text()).toBe(content);
    });

    it('honours If-Range: a stale validator gets the whole file', async () => {
      const etag = (await get(t, { range: 'bytes=0-0' })).headers.get('etag')!;
      const same = await get(t, { range: 'bytes=0-2', 'if-range': etag });
      expect(same.status).toBe(206);
      await same.arrayBuffer();
      const stale = await get(t, { range: 'bytes=0-2', 'if-range': '"stale"' });
      expect(stale.status).toBe(200);
      expect(await stale.text()).toBe(content);
    });

    it('HEAD gives the headers without the body', async () => {
      const res = await fetch(`${relay.url}/media/${t}`, { method: 'HEAD', headers: bearer(token) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBe(String(content.length));
      expect(await res.text()).toBe('');
      expect((await fetch(`${relay.url}/media/${t}`, { method: 'HEAD' })).status).toBe(401);
    });

    it('records each served response as media.fetched, with the range', async () => {
      const before = readEvents(relay.home).filter((e) => e.type === 'media.fetched').length;
      await (await get(t, { range: 'bytes=4-8' })).text();
      const fetched = readEvents(relay.home).filter((e) => e.type === 'media.fetched');
      expect(fetched).toHaveLength(before + 1);
      expect(fetched.at(-1)).toMatchObject({
        data: { via: 'token', status: 206, start: 4, end: 8, size: content.length },
        actor: expect.stringMatching(/^device:/),
      });
    });

    it('refuses a file grown past the cap after registration', async () => {
      const p = write('grows.bin', 'small');
      const t2 = await registered(p);
      fs.appendFileSync(p, Buffer.alloc(CAP));
      const res = await get(t2);
      expect(res.status).toBe(403);
      expect((await res.json()) as Json).toMatchObject({ code: 'media.too_large' });
    });

    it('refuses a registered file swapped for a symlink after registration', async () => {
      const p = write('swap/a.txt', 'original');
      const t2 = await registered(p);
      fs.renameSync(p, p + '.old');
      fs.symlinkSync('/etc/hostname', p);
      const res = await get(t2);
      expect(res.status).toBe(403);
      const body = (await res.json()) as Json;
      expect(body).toMatchObject({ code: 'media.file_changed' });
      expect(JSON.stringify(body)).not.toContain('/etc');
    });

    it('refuses when a directory on the registered path is swapped for a symlink', async () => {
      const p = write('swapdir/inner/a.txt', 'original');
      write('elsewhere/a.txt', 'other file');
      const t2 = await registered(p);
      fs.renameSync(path.join(dir, 'swapdir/inner'), path.join(dir, 'swapdir/inner.old'));
      fs.symlinkSync(path.join(dir, 'elsewhere'), path.join(dir, 'swapdir/inner'));
      expect((await get(t2)).status).toBe(403);
    });

    it('refuses a registered file replaced by another file at the same path', async () => {
      const p = write('replaced.txt', 'one');
      const t2 = await registered(p);
      fs.rmSync(p);
      fs.writeFileSync(p + '.new', 'two');
      fs.renameSync(p + '.new', p);
      expect((await (await get(t2)).json()) as Json).toMatchObject({ code: 'media.file_changed' });
    });

    it('404 when the registered file was deleted', async () => {
      const p = write('deleted.txt', 'bye');
      const t2 = await registered(p);
      fs.rmSync(p);
      const res = await get(t2);
      expect(res.status).toBe(404);
      expect((await res.json()) as Json).toMatchObject({ code: 'media.file_missing' });
    });
  });

  describe('POST /media/{token}/sensitive', () => {
    it('marks a token: fetches carry X-Media-Sensitive: 1 and are not cached', async () => {
      const t = await registered(write('secret.png', 'pixels'), { content_type: 'image/png' });
      const res = await fetch(`${relay.url}/media/${t}/sensitive`, { method: 'POST' });
      expect(res.status).toBe(200);
      expect((await res.json()) as Json).toEqual({ ok: true, token_prefix: t.slice(0, 8), sensitive: true });
      const got = await get(t);
      expect(got.headers.get('x-media-sensitive')).toBe('1');
      expect(got.headers.get('cache-control')).toBe('no-store');
      expect(got.headers.get('content-type')).toBe('image/png');
      const again = await fetch(`${relay.url}/media/${t}/sensitive`, { method: 'POST' });
      expect(again.status).toBe(200);
      expect(readEvents(relay.home).filter((e) => e.type === 'media.marked_sensitive' && e.data.tokenPrefix === t.slice(0, 8))).toHaveLength(1);
    });

    it('registers as sensitive up front', async () => {
      const t = await registered(write('s2.txt', 'x'), { sensitive: true });
      expect((await get(t)).headers.get('x-media-sensitive')).toBe('1');
    });

    it('404 unknown token, 403 from a phone', async () => {
      expect((await fetch(`${relay.url}/media/AAAAAAAAAAAAAAAAAAAAAA/sensitive`, { method: 'POST' })).status).toBe(404);
      const t = await registered(write('s3.txt', 'x'));
      const res = await fetch(`${relay.url}/media/${t}/sensitive`, {
        method: 'POST',
        headers: { ...bearer(token), 'x-forwarded-for': '198.51.100.7' },
      });
      expect(res.status).toBe(403);
    });
  });

  describe('GET /media/inspect', () => {
    it('lists path, type, size, age, expiry, sensitivity and fetch count for the operator', async () => {
      const p = write('inspect.txt', 'inspect me');
      const t = await registered(p, { file_name: 'inspect.txt' });
      await (await get(t)).text();
      await (await get(t)).text();
      relay.clock.advanceSeconds(30);
      const res = await fetch(`${relay.url}/media/inspect`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      const entry = body.entries.find((e: { token_prefix: string }) => e.token_prefix === t.slice(0, 8));
      expect(entry).toMatchObject({
        path: fs.realpathSync(p),
        content_type: 'text/plain',
        file_name: 'inspect.txt',
        size: 10,
        owned: false,
        sensitive: false,
        source: 'register',
        age_seconds: 30,
        expires_in_seconds: 86_370,
        fetch_count: 2,
      });
      expect(body.limits).toMatchObject({ max_size_bytes: CAP, ttl_seconds: 86_400, lru_cap: 500, strict_sandbox: false });
      expect(JSON.stringify(body)).not.toContain(t);
      const one = (await (await fetch(`${relay.url}/media/inspect?token=${t}`)).json()) as Json;
      expect(one.entries).toHaveLength(1);
    });

    it('403 for phones', async () => {
      expect((await fetch(`${relay.url}/media/inspect`, { headers: { ...bearer(token), 'x-forwarded-for': '198.51.100.7' } })).status).toBe(403);
    });
  });

  describe('GET /media/by-path', () => {
    it('400 without path, 401 without bearer', async () => {
      const res = await fetch(`${relay.url}/media/by-path`, { headers: bearer(token) });
      expect(res.status).toBe(400);
      expect((await res.json()) as Json).toMatchObject({ code: 'media.path_required', error: expect.stringContaining('path') });
      expect((await fetch(`${relay.url}/media/by-path?path=/tmp/x`)).status).toBe(401);
      expect((await byPath('relative.txt')).status).toBe(400);
    });

    it('names what is wrong with the query: its codes and messages', async () => {
      const expectations: Array<[string, string, string]> = [
        ['?path=', 'media.path_required', 'path: the query parameter path is required'],
        ['?path=/a&path=/b', 'media.path_required', 'path: the query parameter path is required'],
        ['?path=relative.txt', 'media.bad_path', 'path must be an absolute path (starting with /) without NUL bytes'],
        ['?path=%2Fa%00b', 'media.bad_path', 'path must be an absolute path (starting with /) without NUL bytes'],
        [`?path=/${'a'.repeat(4096)}`, 'media.bad_path', 'path must be an absolute path (starting with /) without NUL bytes'],
        ['?path=/tmp/x&content_type=bad%20type', 'validation_failed', 'content_type must be a media type like image/png'],
        ['?path=/tmp/x&content_type=', 'validation_failed', 'content_type must be a media type like image/png'],
      ];
      for (const [query, code, error] of expectations) {
        const res = await fetch(`${relay.url}/media/by-path${query}`, { headers: bearer(token) });
        expect([query, res.status, await res.json()]).toEqual([query, 400, { ok: false, code, error }]);
      }
    });

    it('streams a readable file, with the content_type override', async () => {
      const p = write('bp.json', '{"a":1}');
      const res = await byPath(p);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('content-disposition')).toBe('inline; filename="bp.json"');
      expect(await res.text()).toBe('{"a":1}');
      const over = await byPath(p, '&content_type=text/plain');
      expect(over.headers.get('content-type')).toBe('text/plain');
      const ranged = await fetch(`${relay.url}/media/by-path?path=${encodeURIComponent(p)}`, { headers: { ...bearer(token), range: 'bytes=1-3' } });
      expect(ranged.status).toBe(206);
      expect(await ranged.text()).toBe('"a"');
      expect((await byPath(p, '&content_type=bad type')).status).toBe(400);
    });

    it('404 for a missing file', async () => {
      const res = await byPath(path.join(dir, 'missing.txt'));
      expect(res.status).toBe(404);
      expect((await res.json()) as Json).toMatchObject({ code: 'media.file_missing' });
    });

    it.each(['/etc/passwd', '/proc/self/environ', '/sys/kernel/hostname', '/dev/null', '/var/log', '/boot'])('403 for system path %s', async (p) => {
      const res = await byPath(p);
      expect([403, 404]).toContain(res.status);
      if (fs.existsSync(p)) expect(res.status).toBe(403);
    });

    it('403 for path traversal, plain and encoded; double encoding is never decoded twice', async () => {
      // As many `..` as `dir` is deep, so the path climbs to / wherever the temp dir is (TMPDIR).
      const climb = (dots: string): string =>
        dir
          .split('/')
          .filter(Boolean)
          .map(() => dots)
          .join('/');
      const dotdot = `${dir}/${climb('..')}/etc/passwd`;
      expect(path.resolve(dotdot)).toBe('/etc/passwd');
      expect((await byPath(dotdot)).status).toBe(403);
      const encoded = await fetch(`${relay.url}/media/by-path?path=${dir}/${climb('%2e%2e')}/etc/passwd`, { headers: bearer(token) });
      expect(encoded.status).toBe(403);
      const double = await fetch(`${relay.url}/media/by-path?path=${dir}/${climb('%252e%252e')}/etc/passwd`, { headers: bearer(token) });
      expect(double.status).toBe(404);
    });

    it('403 for a symlink escaping into a system path, without naming the target', async () => {
      const link = path.join(dir, 'innocent.txt');
      fs.symlinkSync('/etc/passwd', link);
      const res = await byPath(link);
      expect(res.status).toBe(403);
      expect((await res.json()) as Json).toMatchObject({ code: 'media.denied_path' });
    });

    it('403 for a directory and a FIFO (without blocking), and for a file over the cap', async () => {
      expect((await (await byPath(dir)).json()) as Json).toMatchObject({ code: 'media.not_regular' });
      const fifo = path.join(dir, 'bp-fifo');
      execFileSync('mkfifo', [fifo]);
      const res = await byPath(fifo);
      expect(res.status).toBe(403);
      const big = write('bp-big.bin', Buffer.alloc(CAP + 1));
      expect((await (await byPath(big)).json()) as Json).toMatchObject({ code: 'media.too_large' });
    });

    it("403 for the relay's secrets; its workspace is served", async () => {
      expect((await byPath(path.join(relay.home, 'relay', 'secret.key'))).status).toBe(403);
      const ws = path.join(relay.home, 'workspace', 'notes.md');
      fs.mkdirSync(path.dirname(ws), { recursive: true });
      fs.writeFileSync(ws, '# notes');
      const res = await byPath(ws);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('# notes');
    });

    it('accepts other readable absolute paths when the strict sandbox is off (the default)', async () => {
      const p = path.resolve(__dirname, '../../package.json');
      const res = await byPath(p);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    });

    it('records refusals and fetches as events, with the device as actor', async () => {
      await (await byPath('/etc/shadow')).text();
      const events = readEvents(relay.home);
      expect(events.filter((e) => e.type === 'media.refused').at(-1)).toMatchObject({
        data: { path: '/etc/shadow', code: 'media.denied_path' },
        actor: expect.stringMatching(/^device:/),
      });
      expect(events.some((e) => e.type === 'media.fetched' && e.data.via === 'by-path')).toBe(true);
    });
  });

  describe('POST /media/upload', () => {
    const multipart = (parts: Array<{ name: string; value: string | Buffer; filename?: string; type?: string }>) => {
      const form = new FormData();
      for (const p of parts) {
        if (p.filename !== undefined) form.append(p.name, new Blob([p.value], { type: p.type ?? 'application/octet-stream' }), p.filename);
        else form.append(p.name, p.value as string);
      }
      return form;
    };
    const ownedFiles = () => fs.readdirSync(path.join(relay.home, 'relay', 'media-owned'));

    it('streams a multipart file into an owned file and registers it', async () => {
      const bytes = Buffer.from('\x89PNG fake image bytes');
      const res = await fetch(`${relay.url}/media/upload`, {
        method: 'POST',
        headers: bearer(token),
        body: multipart([{ name: 'file', value: bytes, filename: 'photo.png', type: 'image/png' }]),
      });
      const body = (await res.json()) as Json;
      expect(res.status).toBe(200);
      expect(body).toMatchObject({
        ok: true,
        token: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        size: bytes.length,
        content_type: 'image/png',
        file_name: 'photo.png',
        sensitive: false,
      });
      const got = await get(body.token);
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
      expect(got.headers.get('content-type')).toBe('image/png');
      const ev = readEvents(relay.home)
        .filter((e) => e.type === 'media.uploaded')
        .at(-1)!;
      expect(ev.data).toMatchObject({ via: 'multipart', owned: true, size: bytes.length });
      expect(fs.existsSync(ev.data.path as string)).toBe(true);
    });

    it('takes content_type, file_name and sensitive fields; names are reduced to a display name', async () => {
      const res = await fetch(`${relay.url}/media/upload`, {
        method: 'POST',
        headers: bearer(token),
        body: multipart([
          { name: 'content_type', value: 'audio/mp4' },
          { name: 'sensitive', value: 'true' },
          { name: 'file', value: 'm4a', filename: '../../etc/voice.m4a' },
        ]),
      });
      const body = (await res.json()) as Json;
      expect(body).toMatchObject({ content_type: 'audio/mp4', file_name: 'voice.m4a', sensitive: true });
      expect((await get(body.token)).headers.get('x-media-sensitive')).toBe('1');
    });

    it('413 past the cap, and no partial file is left', async () => {
      const before = ownedFiles();
      const res = await fetch(`${relay.url}/media/upload`, {
        method: 'POST',
        headers: bearer(token),
        body: multipart([{ name: 'file', value: Buffer.alloc(CAP + 10), filename: 'huge.bin' }]),
      });
      expect(res.status).toBe(413);
      expect((await res.json()) as Json).toMatchObject({ ok: false, code: 'media.upload_too_large', max_size: CAP });
      expect(ownedFiles()).toEqual(before);
    });

    it('a file of exactly the cap is accepted', async () => {
      const res = await fetch(`${relay.url}/media/upload`, {
        method: 'POST',
        headers: bearer(token),
        body: multipart([{ name: 'file', value: Buffer.alloc(CAP, 7), filename: 'exact.bin' }]),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Json).size).toBe(CAP);
    });

    it('400 for a multipart body without a file field, or with the file in another field', async () => {
      const none = await fetch(`${relay.url}/media/upload`, {
        method: 'POST',
        headers: bearer(token),
        body: multipart([{ name: 'note', value: 'x' }]),
      });
      expect(none.status).toBe(400);
      expect((await none.json()) as Json).toMatchObject({ code: 'media.bad_upload' });
      const other = await fetch(`${relay.url}/media/upload`, {
        method: 'POST',
        headers: bearer(token),
        body: multipart([{ name: 'attachment', value: 'x', filename: 'a.txt' }]),
      });
      expect(other.status).toBe(400);
    });

    it('an upload aborted mid-stream leaves no temp file and registers nothing', async () => {
      const before = ownedFiles();
      const uploadsBefore = readEvents(relay.home).filter((e) => e.type === 'media.uploaded').length;
      const boundary = 'xxBOUNDARYxx';
      const req = http.request(`${relay.url}/media/upload`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(CAP) },
      });
      req.on('error', () => undefined);
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
      req.write(Buffer.alloc(256 * 1024, 1));
      await waitFor(() => ownedFiles().some((f) => f.endsWith('.part')));
      req.destroy();
      await waitFor(() => !ownedFiles().some((f) => f.endsWith('.part')));
      expect(ownedFiles()).toEqual(before);
      expect(readEvents(relay.home).filter((e) => e.type === 'media.uploaded')).toHaveLength(uploadsBefore);
    });

    it('takes the JSON base64 form, bigger than the global 1 MiB body limit, under the same cap', async () => {
      const bytes = Buffer.alloc(CAP - 100, 3);
      const res = await fetch(
        `${relay.url}/media/upload`,
        json({ file_name: 'big.bin', content_type: 'application/octet-stream', content: bytes.toString('base64') }, bearer(token)),
      );
      const body = (await res.json()) as Json;
      expect(res.status).toBe(200);
      expect(body).toMatchObject({ size: bytes.length, file_name: 'big.bin' });
      expect(Buffer.from(await (await get(body.token)).arrayBuffer()).equals(bytes)).toBe(true);
      expect(
        readEvents(relay.home)
          .filter((e) => e.type === 'media.uploaded')
          .at(-1)!.data,
      ).toMatchObject({ via: 'json' });
    });

    it('JSON form: 413 past the cap, 400 for bad base64 or a missing content', async () => {
      const over = await fetch(
        `${relay.url}/media/upload`,
        json({ file_name: 'x', content: Buffer.alloc(CAP + 1).toString('base64') }, bearer(token)),
      );
      expect(over.status).toBe(413);
      expect((await over.json()) as Json).toMatchObject({ code: 'media.upload_too_large' });
      const bad = await fetch(`${relay.url}/media/upload`, json({ file_name: 'x', content: 'not base64!' }, bearer(token)));
      expect(bad.status).toBe(400);
      expect((await bad.json()) as Json).toMatchObject({ error: expect.stringContaining('base64') });
      const missing = await fetch(`${relay.url}/media/upload`, json({ file_name: 'x' }, bearer(token)));
      expect(missing.status).toBe(400);
      expect((await missing.json()) as Json).toMatchObject({ error: expect.stringContaining('content') });
    });

    it('a JSON body past the route limit is refused with 413 before it is parsed', async () => {
      const res = await fetch(`${relay.url}/media/upload`, json({ content: 'A'.repeat(2 * CAP) }, bearer(token)));
      expect(res.status).toBe(413);
    });

    it('401 without a bearer; other content types are refused', async () => {
      expect((await fetch(`${relay.url}/media/upload`, json({ content: 'AA==' }))).status).toBe(401);
      const text = await fetch(`${relay.url}/media/upload`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'text/plain' },
        body: 'hello',
      });
      expect(text.status).toBe(415);
    });

    it('the global body limit still holds on other routes', async () => {
      const res = await fetch(`${relay.url}/media/register`, json({ path: '/tmp/' + 'a'.repeat(2 * CAP) }));
      expect(res.status).toBe(413);
    });
  });

  it('never writes a media token into the event log or the relay log', async () => {
    const t = await registered(write('leak.txt', 'x'));
    await (await get(t)).text();
    const logDir = path.join(relay.home, 'relay', 'events');
    const all = fs
      .readdirSync(logDir)
      .map((f) => fs.readFileSync(path.join(logDir, f), 'utf8'))
      .join('');
    expect(all).not.toContain(t);
    expect(relay.logs.join('')).not.toContain(t);
    expect(all).toContain(t.slice(0, 8));
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
