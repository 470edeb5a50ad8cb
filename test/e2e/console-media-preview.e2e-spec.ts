import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';
import { solidPng } from '../support/png';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** Response bodies are read as loosely typed JSON; the assertions check their shape. */
type Json = any;

/** The console's inline image preview: `GET /console/api/media/:ref/preview`, loopback only. */
describe('console media preview', () => {
  let relay: TestRelay;
  let dir: string;
  const png = solidPng(16, 12);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-media-preview-'));
    relay = await startRelay();
  });
  afterAll(async () => {
    await relay.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const write = (name: string, content: Buffer | string): string => {
    const p = path.join(dir, name);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
    return p;
  };
  /** Registers over loopback and returns the ref the console's media list shows for it. */
  const register = async (p: string, contentType?: string): Promise<string> => {
    const res = await fetch(`${relay.url}/media/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: p, ...(contentType ? { content_type: contentType } : {}) }),
    });
    expect(res.status).toBe(200);
    const token = ((await res.json()) as Json).token as string;
    const list = (await (await fetch(`${relay.url}/console/api/media`)).json()) as Json;
    const entry = list.entries.find((e: Json) => e.token_prefix === token.slice(0, 8));
    expect(entry).toBeDefined();
    return entry.token_prefix as string;
  };
  const preview = (ref: string) => fetch(`${relay.url}/console/api/media/${encodeURIComponent(ref)}/preview`);

  it('serves a registered PNG with its type and locked-down headers, and records no fetch', async () => {
    const ref = await register(write('shot.png', png));
    const before = readEvents(relay.home).length;
    const res = await preview(ref);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-length')).toBe(String(png.length));
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(readEvents(relay.home).slice(before)).toEqual([]);
    const list = (await (await fetch(`${relay.url}/console/api/media`)).json()) as Json;
    expect(list.entries.find((e: Json) => e.token_prefix === ref).fetch_count).toBe(0);
  });

  it('previews jpeg, gif and webp types too', async () => {
    for (const type of ['image/jpeg', 'image/gif', 'image/webp']) {
      const ref = await register(write(`typed-${type.split('/')[1]}.bin`, png), type);
      const res = await preview(ref);
      expect([type, res.status, res.headers.get('content-type')]).toEqual([type, 200, type]);
      await res.arrayBuffer();
    }
  });

  it('415 for a non-image (and for SVG), with the error shape', async () => {
    for (const [name, type] of [
      ['notes.txt', 'text/plain'],
      ['drawing.svg', 'image/svg+xml'],
    ]) {
      const ref = await register(write(name, '<svg xmlns="http://www.w3.org/2000/svg"/>'), type);
      const res = await preview(ref);
      expect(res.status).toBe(415);
      expect((await res.json()) as Json).toMatchObject({ ok: false, code: 'media.not_previewable', error: expect.any(String) });
    }
  });

  it('404 for an unknown, malformed or expired ref', async () => {
    for (const ref of ['AAAAAAAA', 'nope', 'a'.repeat(22)]) {
      const res = await preview(ref);
      expect([ref, res.status]).toEqual([ref, 404]);
      expect((await res.json()) as Json).toMatchObject({ ok: false, code: 'media.not_found' });
    }
  });

  it('404 once the entry has expired', async () => {
    const r2 = await startRelay({ env: { RELAY_MEDIA_TTL_SECONDS: '60' } });
    try {
      const p = write('expiring.png', png);
      const res = await fetch(`${r2.url}/media/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ path: p }),
      });
      const ref = (((await res.json()) as Json).token as string).slice(0, 8);
      expect((await fetch(`${r2.url}/console/api/media/${ref}/preview`)).status).toBe(200);
      r2.clock.advanceSeconds(61);
      expect((await fetch(`${r2.url}/console/api/media/${ref}/preview`)).status).toBe(404);
    } finally {
      await r2.close();
    }
  });

  it('413 for an image over the preview cap', async () => {
    const big = Buffer.concat([png, Buffer.alloc(10 * 1024 * 1024)]);
    const ref = await register(write('huge.png', big));
    const res = await preview(ref);
    expect(res.status).toBe(413);
    expect((await res.json()) as Json).toMatchObject({ ok: false, code: 'media.preview_too_large' });
  });

  it('403 for a non-loopback peer', async () => {
    const ref = await register(write('remote.png', png));
    const res = await relay.app.inject({ method: 'GET', url: `/console/api/media/${ref}/preview`, remoteAddress: '10.0.0.9' });
    expect(res.statusCode).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ ok: false, code: 'auth.loopback_only' });
  });

  it('refuses a file swapped for a symlink after registration, as the media route does', async () => {
    const p = write('swap/a.png', png);
    const ref = await register(p);
    fs.renameSync(p, p + '.old');
    fs.symlinkSync('/etc/hostname', p);
    const res = await preview(ref);
    expect(res.status).toBe(403);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ ok: false, code: 'media.file_changed' });
    expect(JSON.stringify(body)).not.toContain('/etc');
  });

  it('refuses a file replaced by another at the same path', async () => {
    const p = write('replaced.png', png);
    const ref = await register(p);
    fs.writeFileSync(p + '.new', solidPng(4, 4));
    fs.renameSync(p + '.new', p);
    const res = await preview(ref);
    expect(res.status).toBe(403);
    expect((await res.json()) as Json).toMatchObject({ code: 'media.file_changed' });
  });
});
