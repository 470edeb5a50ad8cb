import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { bearer, pairPhone, readEvents, startRelay, tempHome, type Frame, type TestRelay } from '../support/harness';
import { call, REMOTE } from '../support/http';

/**
 * The profiles phones are offered (`auth.ok.profiles`, `pairing/profiles.updated`) and their enablement:
 * a service home shaped like the agent host's, with a default profile, a coder profile with an API
 * server, an avatar and skills, a profile that disables the relay and one whose config is broken.
 */
function hostTree(apiPort: number): string {
  const home = tempHome();
  fs.writeFileSync(
    path.join(home, 'config.yaml'),
    '# the agent host config\nmodel:\n  default: gpt-5.5\n  provider: openai\nplugins:\n  enabled:\n    - svc-relay\n',
  );
  fs.writeFileSync(path.join(home, 'SOUL.md'), '# Helpful host agent\n\nBe kind.\n');
  const coder = path.join(home, 'profiles', 'coder');
  fs.mkdirSync(path.join(coder, 'skills', 'dev', 'refactor'), { recursive: true });
  fs.mkdirSync(path.join(coder, 'skills', 'dev', 'review'), { recursive: true });
  fs.writeFileSync(path.join(coder, 'skills', 'dev', 'refactor', 'SKILL.md'), 'x');
  fs.writeFileSync(path.join(coder, 'skills', 'dev', 'review', 'SKILL.md'), 'x');
  fs.writeFileSync(
    path.join(coder, 'config.yaml'),
    `description: Writes code  # keep\nmodel: {default: claude-opus-4-8, provider: anthropic}\nplatforms:\n  api_server:\n    enabled: true\n    port: ${apiPort}\n    key: sk-coder-secret\n`,
  );
  fs.writeFileSync(path.join(coder, 'avatar.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]));
  const quiet = path.join(home, 'profiles', 'quiet');
  fs.mkdirSync(quiet, { recursive: true });
  fs.writeFileSync(path.join(quiet, 'config.yaml'), 'model:\n  default: small\nplugins:\n  disabled: [svc-relay]\n');
  const broken = path.join(home, 'profiles', 'broken');
  fs.mkdirSync(broken, { recursive: true });
  fs.writeFileSync(path.join(broken, 'config.yaml'), 'model: [unclosed\n');
  fs.mkdirSync(path.join(home, 'profiles', '.hidden'), { recursive: true });
  fs.writeFileSync(path.join(home, 'profiles', '.hidden', 'config.yaml'), 'model: x\n');
  return home;
}

describe('the profile catalog: auth.ok, profiles.updated, enablement (spec 4.7, 4.13)', () => {
  let relay: TestRelay;
  let api: net.Server;
  let apiPort: number;
  beforeAll(async () => {
    api = net.createServer((s) => s.end());
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    apiPort = (api.address() as net.AddressInfo).port;
    relay = await startRelay({ home: hostTree(apiPort), env: { RELAY_WEBAPI_URL: 'http://192.0.2.10:8642' } });
  });
  afterAll(async () => {
    await relay.close();
    api.close();
  });

  it('auth.ok carries the rows the app parses; a profile that disables the relay, a broken config and hidden names are left out', async () => {
    const { phone, ok } = await pairPhone(relay);
    phone.close();
    const rows = ok.payload.profiles as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.name)).toEqual(['default', 'coder']);
    expect(rows[0]).toEqual({
      name: 'default',
      model: 'gpt-5.5',
      provider: 'openai',
      description: 'Helpful host agent',
      system_message: '# Helpful host agent\n\nBe kind.',
      gateway_running: false,
      has_soul: true,
      skill_count: 0,
      api_server_enabled: false,
      api_server_url: null,
      api_server_host: null,
      api_server_port: null,
      api_server_key_present: false,
      is_default: true,
      has_avatar: false,
    });
    // The profile's API server is on 127.0.0.1: a phone is told the relay's configured API host instead;
    // the port answers, so its gateway counts as running. The key's presence is told, never the key.
    expect(rows[1]).toMatchObject({
      name: 'coder',
      model: 'claude-opus-4-8',
      provider: 'anthropic',
      description: 'Writes code',
      system_message: null,
      has_soul: false,
      skill_count: 2,
      api_server_enabled: true,
      api_server_url: `http://192.0.2.10:${apiPort}`,
      api_server_host: '127.0.0.1',
      api_server_port: apiPort,
      api_server_key_present: true,
      gateway_running: true,
      is_default: false,
      has_avatar: true,
    });
    expect(JSON.stringify(ok)).not.toContain('sk-coder-secret');
    // The log holds names, plugin states and digests: no SOUL text, no model, no key.
    const changed = readEvents(relay.home).filter((e) => e.type === 'profile.catalog_changed');
    expect(changed).toHaveLength(1);
    expect(changed[0].data).toMatchObject({ reason: 'startup', offered: 2 });
    expect((changed[0].data.profiles as Array<{ name: string; relay: string }>).map((p) => [p.name, p.relay])).toEqual([
      ['default', 'enabled'],
      ['broken', 'absent'],
      ['coder', 'absent'],
      ['quiet', 'disabled'],
    ]);
    expect(JSON.stringify(changed)).not.toMatch(/Be kind|claude|sk-coder/);
  });

  it('a SOUL written through the relay reaches every connected phone as profiles.updated (array at the top level and in the payload)', async () => {
    const { phone, token } = await pairPhone(relay);
    const put = await call(relay, 'PUT', '/api/profiles/coder/soul', { content: '# Careful coder\nTest first.\n' }, { ...REMOTE, ...bearer(token) });
    expect(put.status).toBe(200);
    const pushed = (await phone.type('pairing', 'profiles.updated')) as Frame & { profiles?: Array<Record<string, unknown>> };
    expect(pushed.profiles).toEqual(pushed.payload.profiles);
    expect(pushed.profiles!.find((p) => p.name === 'coder')).toMatchObject({ has_soul: true, system_message: '# Careful coder\nTest first.' });
    const last = readEvents(relay.home)
      .filter((e) => e.type === 'profile.catalog_changed')
      .pop()!;
    expect(last.data.reason).toBe('file_written');
    phone.close();
  });

  it('the 30 s rescan (on the injected clock) notices a config edited by hand; no change, no event', async () => {
    const { phone } = await pairPhone(relay);
    const before = readEvents(relay.home).filter((e) => e.type === 'profile.catalog_changed').length;
    relay.clock.advance(31_000);
    await relay.sweep();
    relay.clock.advance(31_000);
    await relay.sweep();
    expect(readEvents(relay.home).filter((e) => e.type === 'profile.catalog_changed')).toHaveLength(before);
    fs.writeFileSync(path.join(relay.home, 'profiles', 'broken', 'config.yaml'), 'model:\n  default: fixed-model\n');
    relay.clock.advance(31_000);
    await relay.sweep();
    const pushed = await phone.type('pairing', 'profiles.updated');
    expect((pushed.payload.profiles as Array<{ name: string }>).map((p) => p.name)).toEqual(['default', 'broken', 'coder']);
    phone.close();
  });

  it('GET /relay/profiles (loopback only) lists every config with its plugin state', async () => {
    const list = await call(relay, 'GET', '/relay/profiles');
    expect(list.status).toBe(200);
    expect(list.body.profiles.map((p: { profile: string; state: string }) => [p.profile, p.state])).toEqual([
      ['default', 'enabled'],
      ['broken', 'absent'],
      ['coder', 'absent'],
      ['quiet', 'disabled'],
    ]);
    expect((await call(relay, 'GET', '/relay/profiles', undefined, REMOTE)).status).toBe(403);
  });

  it('enable: bad input is refused with nothing written and no event', async () => {
    const before = readEvents(relay.home).length;
    const coderConfig = fs.readFileSync(path.join(relay.home, 'profiles', 'coder', 'config.yaml'), 'utf8');
    for (const [body, status] of [
      [{}, 400],
      [{ names: 'coder' }, 400],
      [{ names: ['coder', 'nobody'] }, 404],
      [{ names: ['../etc'] }, 404],
    ] as const) {
      const r = await call(relay, 'POST', '/relay/profiles/enable', body);
      expect(r.status).toBe(status);
      expect(r.body).toMatchObject({ ok: false, error: expect.any(String), code: expect.any(String) });
    }
    expect((await call(relay, 'POST', '/relay/profiles/enable', { all: true }, REMOTE)).status).toBe(403);
    expect(readEvents(relay.home)).toHaveLength(before);
    expect(fs.readFileSync(path.join(relay.home, 'profiles', 'coder', 'config.yaml'), 'utf8')).toBe(coderConfig);
  });

  it('enable <name>: comments and keys kept, .bak of the previous text, profile.relay_enabled, phones told', async () => {
    const { phone } = await pairPhone(relay);
    const file = path.join(relay.home, 'profiles', 'quiet', 'config.yaml');
    const old = fs.readFileSync(file, 'utf8');
    const dry = await call(relay, 'POST', '/relay/profiles/enable', { names: ['quiet'], dry_run: true });
    expect(dry.body.results).toEqual([{ profile: 'quiet', path: file, was: 'disabled', changed: true }]);
    expect(fs.readFileSync(file, 'utf8')).toBe(old);
    const r = await call(relay, 'POST', '/relay/profiles/enable', { names: ['quiet', 'coder'] });
    expect(r.status).toBe(200);
    expect(r.body.results.map((x: { profile: string; was: string; changed: boolean }) => [x.profile, x.was, x.changed])).toEqual([
      ['quiet', 'disabled', true],
      ['coder', 'absent', true],
    ]);
    expect(fs.readFileSync(`${file}.bak`, 'utf8')).toBe(old);
    expect(fs.readFileSync(file, 'utf8')).toBe('model:\n  default: small\nplugins:\n  disabled: []\n  enabled:\n    - svc-relay\n');
    const coder = fs.readFileSync(path.join(relay.home, 'profiles', 'coder', 'config.yaml'), 'utf8');
    expect(coder).toMatch(/^description: Writes code +# keep$/m);
    expect(coder).toContain('key: sk-coder-secret');
    const enabled = readEvents(relay.home).filter((e) => e.type === 'profile.relay_enabled');
    expect(enabled.map((e) => [e.data.profile, e.data.was, e.data.file])).toEqual([
      ['quiet', 'disabled', 'profiles/quiet/config.yaml'],
      ['coder', 'absent', 'profiles/coder/config.yaml'],
    ]);
    expect(enabled[0].data.sha256).toMatch(/^[0-9a-f]{64}$/);
    // quiet no longer disables the relay: phones are now offered it.
    const pushed = await phone.next(
      (f) => f.type === 'profiles.updated' && (f.payload.profiles as Array<{ name: string }>).some((p) => p.name === 'quiet'),
    );
    expect(pushed.channel).toBe('pairing');
    // --all: the one left (broken, fixed by hand above); then nothing is left to write, and no event.
    const all = await call(relay, 'POST', '/relay/profiles/enable', { all: true });
    expect(all.body.results.filter((x: { changed: boolean }) => x.changed).map((x: { profile: string }) => x.profile)).toEqual(['broken']);
    const again = await call(relay, 'POST', '/relay/profiles/enable', { all: true });
    expect(again.body.results.every((x: { changed: boolean }) => !x.changed)).toBe(true);
    expect(readEvents(relay.home).filter((e) => e.type === 'profile.relay_enabled')).toHaveLength(3);
    phone.close();
  });

  it('the catalog and the enablements survive a restart', async () => {
    relay = await relay.restart();
    const list = await call(relay, 'GET', '/relay/info');
    expect(list.body.profiles.map((p: { name: string; relay_state: string }) => [p.name, p.relay_state])).toEqual([
      ['default', 'enabled'],
      // The reference's name for it, which the app's diagnostics look up (test/compat/app-profile-inspector).
      ['(default)', 'enabled'],
      ['broken', 'enabled'],
      ['coder', 'enabled'],
      ['quiet', 'enabled'],
    ]);
    // Nothing changed on disk while it was down: the restart appends no catalog change.
    const types = readEvents(relay.home).map((e) => e.type);
    expect(types.lastIndexOf('profile.catalog_changed')).toBeLessThan(types.lastIndexOf('relay.started'));
  });
});

describe('many large SOULs', () => {
  it('auth.ok carries at most 256 KiB of SOUL text; the rest of the rows come without theirs (has_soul stays true)', async () => {
    const home = tempHome();
    for (let i = 0; i < 6; i++) {
      const dir = path.join(home, 'profiles', `p${i}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'config.yaml'), 'model: {default: m}\n');
      fs.writeFileSync(path.join(dir, 'SOUL.md'), `# Soul ${i}\n` + 'x'.repeat(60 * 1024));
    }
    const relay = await startRelay({ home });
    try {
      const { phone, ok } = await pairPhone(relay);
      phone.close();
      const rows = ok.payload.profiles as Array<{ name: string; system_message: string | null; has_soul: boolean }>;
      expect(rows).toHaveLength(6);
      expect(rows.filter((r) => r.system_message !== null)).toHaveLength(4);
      expect(rows.every((r) => r.has_soul)).toBe(true);
      expect(JSON.stringify(ok).length).toBeLessThan(300 * 1024);
    } finally {
      await relay.close();
    }
  });
});

describe('profile discovery off (RELAY_PROFILE_DISCOVERY=0)', () => {
  it('offers phones no profiles and records no catalog', async () => {
    const relay = await startRelay({ home: hostTree(9), env: { RELAY_PROFILE_DISCOVERY: '0' } });
    try {
      const { phone, ok } = await pairPhone(relay);
      phone.close();
      expect(ok.payload.profiles).toEqual([]);
      expect(readEvents(relay.home).some((e) => e.type === 'profile.catalog_changed')).toBe(false);
      // The routes of spec 4.7 still answer.
      expect((await call(relay, 'GET', '/api/profiles/coder/skills')).body.total).toBe(2);
    } finally {
      await relay.close();
    }
  });
});
