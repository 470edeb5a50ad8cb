import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureBuilt, ROOT, spawnSvc } from '../support/dist';

jest.setTimeout(60_000);
beforeAll(() => ensureBuilt(), 120_000);

/** Debian's python3 with python3-aiohttp and python3-yaml (.ci/run installs them): the agent's stack. */
const PYTHON = '/usr/bin/python3';
const FAKE = path.join(ROOT, 'test', 'fixtures', 'compat', 'fake_api_server.py');

async function apiServer(
  kind: 'old' | 'new',
  site: string,
  home: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; child: ChildProcess; out: () => string }> {
  const child = spawn(PYTHON, [FAKE, kind, site], { env: { ...process.env, SVC_HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  for (let i = 0; i < 200 && !/^\d+\n/.test(out); i++) await new Promise((r) => setTimeout(r, 25));
  const port = /^(\d+)\n/.exec(out)?.[1];
  if (!port) throw new Error(`fake API server did not start: ${out}`);
  return { url: `http://127.0.0.1:${port}`, child, out: () => out };
}

const get = async (url: string, init: RequestInit = {}) => {
  const r = await fetch(url, init);
  const t = await r.text();
  let body: any = t;
  try {
    body = JSON.parse(t);
  } catch {
    /* text */
  }
  return { status: r.status, body };
};

describe('svc relay compat: the compatibility hook against a fake old and a fake new API server (spec 4.12)', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-compat-'));
  const site = path.join(tmp, 'site-packages');
  const home = path.join(tmp, 'home');
  const env = { SVC_HOME: home, SVC_PYTHON: PYTHON };
  const servers: ChildProcess[] = [];
  const start = async (kind: 'old' | 'new', extra: NodeJS.ProcessEnv = {}) => {
    const s = await apiServer(kind, site, home, extra);
    servers.push(s.child);
    return s;
  };
  beforeAll(() => {
    fs.mkdirSync(site, { recursive: true });
    fs.mkdirSync(path.join(home, 'skills', 'dev', 'refactor'), { recursive: true });
    fs.writeFileSync(path.join(home, 'skills', 'dev', 'refactor', 'SKILL.md'), '---\ndescription: safe\n---\nRefactor safely');
    fs.writeFileSync(
      path.join(home, 'config.yaml'),
      'model:\n  default: old-model\n  provider: openai\n  context_length: 8192\ncustom_key: keep me\nproviders:\n  openai: {api_key: sk-x}\n',
    );
  });
  afterAll(() => {
    for (const c of servers) c.kill();
  });

  it('without the hook an old server lacks the routes; install adds the .pth and the module; status reports it from the files', async () => {
    const bare = await start('old');
    expect((await get(`${bare.url}/api/config`)).status).toBe(404);
    const inst = spawnSvc(['relay', 'compat', 'install', '--site-packages', site, '--json'], env);
    expect((await inst.exited).code).toBe(0);
    expect(JSON.parse(inst.stdout())).toMatchObject({ ok: true, action: 'install', changed: true, target: path.join(site, 'svc_relay_compat.pth') });
    const again = spawnSvc(['relay', 'compat', 'install', '--site-packages', site], env);
    await again.exited;
    expect(again.stdout()).toContain('already installed');
    const st = spawnSvc(['relay', 'compat', 'status', '--site-packages', site, '--json'], env);
    await st.exited;
    expect(JSON.parse(st.stdout())).toMatchObject({
      installed: true,
      pth_files: [{ managed: true, module_present: true }],
      module: { current: true },
    });
  });

  it('an old server gains the compatibility routes: config (other fields kept), skill detail, memory, the 501 toggle; never session routes', async () => {
    fs.mkdirSync(path.join(home, 'memories'), { recursive: true });
    fs.writeFileSync(path.join(home, 'memories', 'MEMORY.md'), 'Ana likes tea.\n\nBen drinks coffee.\n');
    const old = await start('old');
    expect(old.out()).toMatch(/added.*GET \/api\/config/);
    expect((await get(`${old.url}/api/config`)).body).toMatchObject({ model: 'old-model', provider: 'openai', config: { custom_key: 'keep me' } });
    expect(await get(`${old.url}/api/skills/toggle`, { method: 'PUT', body: '{"name":"x","enabled":false}' })).toMatchObject({
      status: 501,
      body: { error: 'skill_toggle_not_implemented' },
    });
    expect((await get(`${old.url}/api/skills/refactor`)).body).toMatchObject({ success: true, content: expect.stringContaining('Refactor safely') });
    expect((await get(`${old.url}/api/skills/..%2fconfig`)).status).toBeGreaterThanOrEqual(400);
    expect((await get(`${old.url}/api/memory`)).body.targets[0]).toEqual({
      target: 'memory',
      entries: ['Ana likes tea.', 'Ben drinks coffee.'],
      entry_count: 2,
    });
    const patched = await get(`${old.url}/api/config`, { method: 'PATCH', body: JSON.stringify({ model: 'new-model' }) });
    expect(patched.body).toMatchObject({ ok: true, model: 'new-model', provider: 'openai' });
    const text = fs.readFileSync(path.join(home, 'config.yaml'), 'utf8');
    expect(text).toContain('custom_key: keep me');
    expect(text).toContain('api_key: sk-x');
    expect(text).not.toContain('context_length');
    expect((await get(`${old.url}/api/config`, { method: 'PATCH', body: JSON.stringify({ base_url: 'x', evil: 1 }) })).status).toBe(400);
    for (const p of ['/api/sessions', '/api/sessions/search?q=x', '/api/available-models'])
      expect([p, (await get(`${old.url}${p}`)).status]).toEqual([p, 404]);
    // The memory writes are not bridged: the feature is absent, not redirected.
    expect((await get(`${old.url}/api/memory`, { method: 'POST', body: '{}' })).status).toBe(405);
  });

  it('a new server keeps its own routes (never shadowed); with an API key the hook routes want it too', async () => {
    const fresh = await start('new', { API_SERVER_KEY: 'k-123456789' });
    expect((await get(`${fresh.url}/api/config`)).body).toEqual({ native: true });
    expect((await get(`${fresh.url}/api/skills/toggle`, { method: 'PUT' })).status).toBe(401);
    expect((await get(`${fresh.url}/api/skills/toggle`, { method: 'PUT', headers: { authorization: 'Bearer k-123456789' } })).status).toBe(501);
    expect(fresh.out()).not.toMatch(/'GET \/api\/config'/);
  });

  it('remove takes the .pth away (the next start is bare); --force needed for a file that is not the hook', async () => {
    const rm = spawnSvc(['relay', 'compat', 'remove', '--site-packages', site], env);
    expect((await rm.exited).code).toBe(0);
    expect(rm.stdout()).toContain('Compat hook removed');
    expect(fs.existsSync(path.join(site, 'svc_relay_compat.pth'))).toBe(false);
    const bare = await start('old');
    expect((await get(`${bare.url}/api/config`)).status).toBe(404);
    const none = spawnSvc(['relay', 'compat', 'remove', '--site-packages', site], env);
    await none.exited;
    expect(none.stdout()).toContain('not found');
    fs.writeFileSync(path.join(site, 'svc_relay_compat.pth'), 'import something_else\n');
    const refused = spawnSvc(['relay', 'compat', 'remove', '--site-packages', site], env);
    expect((await refused.exited).code).toBe(1);
    expect(refused.stderr()).toContain('--force');
    const forced = spawnSvc(['relay', 'compat', 'install', '--site-packages', site], env);
    expect((await forced.exited).code).toBe(1);
    const bad = spawnSvc(['relay', 'compat', 'frobnicate'], env);
    expect((await bad.exited).code).toBe(2);
  });
});
