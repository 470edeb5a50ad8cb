import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bearer, pairPhone, startRelay, type TestRelay } from '../support/harness';

/** Response bodies are read as loosely typed JSON; the assertions check their shape. */
type Json = any;

/** The by-path policy with a real home directory and the strict sandbox switched on. */
describe('media policy over a real relay', () => {
  const repo = path.resolve(__dirname, '../..');
  let relay: TestRelay;
  let token: string;
  let home: string;
  let tmp: string;
  /** A file inside no allowed root, wherever this checkout lives (even under the system temp dir). */
  let outsideFile: string;
  let outsideDir: string;

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-media-home-'));
    fs.mkdirSync(path.join(home, '.ssh'));
    fs.writeFileSync(path.join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY');
    fs.mkdirSync(path.join(home, '.config', 'gh'), { recursive: true });
    fs.writeFileSync(path.join(home, '.config', 'gh', 'hosts.yml'), 'oauth_token: x');
    fs.writeFileSync(path.join(home, '.netrc'), 'machine x password y');
    // The relay's temp dir is its own (TMPDIR), so a sibling of it is outside every allowed root.
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-media-sbx-'));
    outsideDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-media-outside-'));
    outsideFile = path.join(outsideDir, 'outside.json');
    fs.writeFileSync(outsideFile, '{"secret":false}');
    // The relay's user has this home (the relay reads HOME and TMPDIR from its environment).
    relay = await startRelay({
      env: {
        HOME: home,
        TMPDIR: tmp,
        RELAY_MEDIA_STRICT_SANDBOX: '1',
        RELAY_MEDIA_ALLOWED_ROOTS: `/nonexistent-root${path.delimiter}${path.join(repo, 'docs')}`,
      },
    });
    const paired = await pairPhone(relay);
    paired.phone.close();
    token = paired.token;
  });
  afterAll(async () => {
    await relay.close();
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(outsideDir, { recursive: true, force: true });
  });

  const byPath = async (p: string): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${relay.url}/media/by-path?path=${encodeURIComponent(p)}`, { headers: bearer(token) });
    const text = await res.text();
    return { status: res.status, body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text };
  };

  it.each(['.ssh/id_ed25519', '.config/gh/hosts.yml', '.netrc'])('refuses ~/%s, also through a symlink in tmp', async (rel) => {
    const direct = await byPath(path.join(home, rel));
    expect(direct.status).toBe(403);
    expect(direct.body).toMatchObject({ code: 'media.denied_path' });
    const link = path.join(tmp, rel.replace(/\//g, '_'));
    fs.symlinkSync(path.join(home, rel), link);
    const viaLink = await byPath(link);
    expect(viaLink.status).toBe(403);
    expect(JSON.stringify(viaLink.body)).not.toContain(home);
  });

  it('strict sandbox: the temp dir, the workspace and RELAY_MEDIA_ALLOWED_ROOTS are served', async () => {
    fs.writeFileSync(path.join(tmp, 'ok.txt'), 'tmp file');
    expect(await byPath(path.join(tmp, 'ok.txt'))).toEqual({ status: 200, body: 'tmp file' });
    const ws = path.join(relay.home, 'workspace', 'out.txt');
    fs.mkdirSync(path.dirname(ws), { recursive: true });
    fs.writeFileSync(ws, 'workspace file');
    expect(await byPath(ws)).toEqual({ status: 200, body: 'workspace file' });
    expect((await byPath(path.join(repo, 'docs', 'PROTOCOL.md'))).status).toBe(200);
  });

  it('strict sandbox: everything else is 403 media.outside_sandbox, symlinks judged by their target', async () => {
    const outside = await byPath(outsideFile);
    expect(outside.status).toBe(403);
    expect(outside.body).toMatchObject({ code: 'media.outside_sandbox' });
    const link = path.join(tmp, 'escape.json');
    fs.symlinkSync(outsideFile, link);
    expect((await byPath(link)).body).toMatchObject({ code: 'media.outside_sandbox' });
  });

  it('registration follows the same sandbox (a 400 there: every registration failure is, spec 4.4)', async () => {
    const res = await fetch(`${relay.url}/media/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: outsideFile }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).code).toBe('media.outside_sandbox');
  });

  it('inspect reports the sandbox', async () => {
    const body = (await (await fetch(`${relay.url}/media/inspect`)).json()) as Json;
    expect(body.limits.strict_sandbox).toBe(true);
    expect(body.limits.allowed_roots).toEqual(expect.arrayContaining([fs.realpathSync(tmp), path.join(repo, 'docs'), '/nonexistent-root']));
  });
});
