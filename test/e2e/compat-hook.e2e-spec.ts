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
  kind: 'old' | 'new' | 'adapter',
  site: string,
  home: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; child: ChildProcess; out: () => string }> {
  const child = spawn(PYTHON, [FAKE, kind, site], { env: { ...process.env, SVC_HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  // Ready once the whole `compat:` line is in (it says what the hook added): the port line alone came a
  // pipe read before it once, under load (CI read "39629\ncompat:").
  for (let i = 0; i < 400 && !/^\d+\ncompat:[^\n]*\n/.test(out); i++) await new Promise((r) => setTimeout(r, 25));
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
  const start = async (kind: 'old' | 'new' | 'adapter', extra: NodeJS.ProcessEnv = {}) => {
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
    // What install writes is the module the build carries beside bin/svc's code (dist/), byte for byte the source file.
    expect(fs.readFileSync(path.join(home, 'compat', 'svc_relay_compat.py'), 'utf8')).toBe(
      fs.readFileSync(path.join(ROOT, 'apps', 'relay', 'src', 'compat', 'svc_relay_compat.py'), 'utf8'),
    );
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

  const KEY = 'k-123456789';
  const auth = { authorization: `Bearer ${KEY}` };

  it('an old server gains the compatibility routes: config (other fields kept), skill detail, memory, the 501 toggle; never session routes', async () => {
    fs.mkdirSync(path.join(home, 'memories'), { recursive: true });
    fs.writeFileSync(path.join(home, 'memories', 'MEMORY.md'), 'Ana likes tea.\n\nBen drinks coffee.\n');
    const old = await start('old', { API_SERVER_KEY: KEY });
    expect(old.out()).toMatch(/added.*GET \/api\/config/);
    expect((await get(`${old.url}/api/config`, { headers: auth })).body).toMatchObject({
      model: 'old-model',
      provider: 'openai',
      config: { custom_key: '********', providers: { openai: { api_key: '********' } } },
    });
    expect(await get(`${old.url}/api/skills/toggle`, { method: 'PUT', body: '{"name":"x","enabled":false}', headers: auth })).toMatchObject({
      status: 501,
      body: { error: 'skill_toggle_not_implemented' },
    });
    expect((await get(`${old.url}/api/skills/refactor`, { headers: auth })).body).toMatchObject({
      success: true,
      content: expect.stringContaining('Refactor safely'),
    });
    expect((await get(`${old.url}/api/skills/..%2fconfig`, { headers: auth })).status).toBeGreaterThanOrEqual(400);
    expect((await get(`${old.url}/api/memory`, { headers: auth })).body.targets[0]).toEqual({
      target: 'memory',
      entries: ['Ana likes tea.', 'Ben drinks coffee.'],
      entry_count: 2,
    });
    const patched = await get(`${old.url}/api/config`, { method: 'PATCH', body: JSON.stringify({ model: 'new-model' }), headers: auth });
    expect(patched.body).toMatchObject({ ok: true, model: 'new-model', provider: 'openai' });
    const text = fs.readFileSync(path.join(home, 'config.yaml'), 'utf8');
    expect(text).toContain('custom_key: keep me');
    expect(text).toContain('api_key: sk-x');
    expect(text).not.toContain('context_length');
    for (const p of ['/api/sessions', '/api/sessions/search?q=x', '/api/available-models'])
      expect([p, (await get(`${old.url}${p}`, { headers: auth })).status]).toEqual([p, 404]);
    // The memory writes are not bridged: the feature is absent, not redirected.
    expect((await get(`${old.url}/api/memory`, { method: 'POST', body: '{}', headers: auth })).status).toBe(405);
  });

  describe('GET/PATCH /api/config never hand over the provider credentials (issue: a paired phone holds the API key)', () => {
    const SECRETS = [
      'sk-proj-LEAKME0000000000000001',
      'or-key-LEAKME-2',
      'ant-LEAKME-3',
      'LEAKME-pw-4',
      'LEAKME-tok-5',
      'ghp_LEAKME000000000000006',
      'LEAKME-bearer-7',
      'LEAKME-urlpass-8',
      'LEAKME-query-9',
      'LEAKME-flag-10',
      'LEAKME-flag-11',
      '998877665544',
    ];
    const CONFIG = [
      'model:',
      '  default: claude-x',
      '  provider: openrouter',
      `  base_url: https://agent:${SECRETS[7]}@llm.example.com/v1?api_key=${SECRETS[8]}&region=eu`,
      `  api_key: ${SECRETS[1]}`,
      'providers:',
      `  openai: {api_key: ${SECRETS[0]}, base_url: "https://api.openai.com/v1"}`,
      `  anthropic: {apiKey: ${SECRETS[2]}}`,
      'auxiliary:',
      '  vision: {provider: openai, model: gpt-vision, max_tokens: 512}',
      `  web: {OPENAI_API_KEY: ${SECRETS[1]}, password: ${SECRETS[3]}, access_token: ${SECRETS[4]}}`,
      'mcp_servers:',
      `  gh: {command: gh-mcp, args: [--token, ${SECRETS[9]}, "--api-key=${SECRETS[10]}", --verbose], env: {GITHUB_TOKEN: ${SECRETS[5]}}}`,
      `  web: {url: "https://mcp.example", headers: {Authorization: "Bearer ${SECRETS[6]}"}}`,
      `pin_password: ${SECRETS[11]}`,
      'agent:',
      '  personalities: {helper: "You help.", pirate: "Arr."}',
      'display: {personality: pirate, skin: default}',
      'custom_note: keep me',
      '',
    ].join('\n');
    let server: { url: string };
    const cfgPath = () => path.join(home, 'config.yaml');
    beforeAll(async () => {
      fs.writeFileSync(cfgPath(), CONFIG);
      server = await start('old', { API_SERVER_KEY: KEY });
    });

    it('GET: what the app reads (model, provider, personalities, display) is there; no secret of the config is in the body', async () => {
      const r = await fetch(`${server.url}/api/config`, { headers: auth });
      const raw = await r.text();
      expect(r.status).toBe(200);
      for (const s of SECRETS) expect([s, raw.includes(s)]).toEqual([s, false]);
      const body = JSON.parse(raw);
      expect(body).toMatchObject({
        model: 'claude-x',
        provider: 'openrouter',
        api_mode: '',
        base_url: 'https://********@llm.example.com/v1?api_key=********&region=eu',
        config: {
          agent: { personalities: { helper: 'You help.', pirate: 'Arr.' } },
          display: { personality: 'pirate' },
          custom_note: 'keep me',
          providers: { openai: { api_key: '********', base_url: 'https://api.openai.com/v1' }, anthropic: { apiKey: '********' } },
          auxiliary: { vision: { provider: 'openai', model: 'gpt-vision', max_tokens: 512 } },
        },
      });
      expect(body.config.mcp_servers.gh.args).toEqual(['--token', '********', '--api-key=********', '--verbose']);
      expect(body.config.pin_password).toBe('********');
    });

    it('PATCH: base_url, keys and anything but model/provider are refused by name (400) and the file is untouched', async () => {
      for (const bad of [
        { base_url: 'https://attacker.example/v1' },
        { model: 'x', base_url: 'https://attacker.example/v1' },
        { api_key: 'mine' },
        { providers: { openai: { base_url: 'https://attacker.example' } } },
        { model: { default: 'x' } },
        { provider: 'evil provider/with spaces' },
        { model: '' },
      ]) {
        const r = await get(`${server.url}/api/config`, { method: 'PATCH', body: JSON.stringify(bad), headers: auth });
        expect([bad, r.status]).toEqual([bad, 400]);
        expect(r.body).toMatchObject({ ok: false, error: expect.any(String), code: expect.stringMatching(/^compat\./) });
        expect(fs.readFileSync(cfgPath(), 'utf8')).toBe(CONFIG);
      }
      const named = await get(`${server.url}/api/config`, { method: 'PATCH', body: JSON.stringify({ base_url: 'x', evil: 1 }), headers: auth });
      expect(named.body).toMatchObject({ code: 'compat.field_not_writable', unknown: ['base_url', 'evil'], writable: ['model', 'provider'] });
      expect(named.body.error).toContain('base_url');
      // Model and provider selection still works, and keeps the rest (keys, base_url) as it was.
      const ok = await get(`${server.url}/api/config`, {
        method: 'PATCH',
        body: JSON.stringify({ model: 'gpt-5', provider: 'openai' }),
        headers: auth,
      });
      expect(ok).toMatchObject({ status: 200, body: { ok: true, model: 'gpt-5', provider: 'openai' } });
      expect(JSON.stringify(ok.body)).not.toMatch(/LEAKME/);
      const text = fs.readFileSync(cfgPath(), 'utf8');
      for (const s of SECRETS.slice(0, 11)) expect(text).toContain(s);
      expect(text).toContain('llm.example.com');
    });

    it('a wrong or missing bearer is 401; an API server without a key serves neither route (403), whatever it is sent', async () => {
      expect((await get(`${server.url}/api/config`)).status).toBe(401);
      expect((await get(`${server.url}/api/config`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
      const open = await start('old');
      fs.writeFileSync(cfgPath(), CONFIG);
      const r = await fetch(`${open.url}/api/config`);
      const raw = await r.text();
      expect(r.status).toBe(403);
      expect(JSON.parse(raw)).toMatchObject({ ok: false, code: 'compat.api_key_required', error: expect.stringContaining('API_SERVER_KEY') });
      expect(raw).not.toMatch(/LEAKME/);
      const w = await get(`${open.url}/api/config`, { method: 'PATCH', body: JSON.stringify({ model: 'x' }) });
      expect(w).toMatchObject({ status: 403, body: { code: 'compat.api_key_required' } });
      expect(fs.readFileSync(cfgPath(), 'utf8')).toBe(CONFIG);
    });

    it("the agent's own adapter decides: no key in it is 403 even though its auth check lets everyone in; with a key, its check applies", async () => {
      const keyless = await start('adapter', { ADAPTER_KEY: '' });
      expect((await get(`${keyless.url}/api/config`)).body).toMatchObject({ code: 'compat.api_key_required' });
      expect((await get(`${keyless.url}/api/config`, { method: 'PATCH', body: '{"model":"x"}' })).status).toBe(403);
      const keyed = await start('adapter', { ADAPTER_KEY: 'adapter-key-1' });
      expect((await get(`${keyed.url}/api/config`)).status).toBe(401);
      const r = await get(`${keyed.url}/api/config`, { headers: { authorization: 'Bearer adapter-key-1' } });
      expect(r.status).toBe(200);
      expect(JSON.stringify(r.body)).not.toMatch(/LEAKME/);
      fs.writeFileSync(path.join(home, 'config.yaml'), 'model:\n  default: old-model\n  provider: openai\n');
    });
  });

  it('a new server keeps its own routes (never shadowed); with an API key the hook routes want it too', async () => {
    const fresh = await start('new', { API_SERVER_KEY: KEY });
    expect((await get(`${fresh.url}/api/config`)).body).toEqual({ native: true });
    expect((await get(`${fresh.url}/api/skills/toggle`, { method: 'PUT' })).status).toBe(401);
    expect((await get(`${fresh.url}/api/skills/toggle`, { method: 'PUT', headers: auth })).status).toBe(501);
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
