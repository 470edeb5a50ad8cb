import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bearer, pairPhone, readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { call, REMOTE } from '../support/http';

/** A realistic service home: the default profile (the home itself) and one named profile. */
function profileTree(): string {
  const home = tempHome();
  const work = path.join(home, 'profiles', 'work');
  fs.mkdirSync(path.join(work, 'skills', 'coding', 'refactor'), { recursive: true });
  fs.mkdirSync(path.join(work, 'skills', 'notes', 'daily'), { recursive: true });
  fs.mkdirSync(path.join(work, 'skills', '.hidden', 'x'), { recursive: true });
  fs.mkdirSync(path.join(work, 'memories'), { recursive: true });
  fs.writeFileSync(
    path.join(work, 'config.yaml'),
    'description: Work persona\nmodel:\n  default: gpt-5\n  provider: openai\nproviders:\n  openai:\n    api_key: sk-secret-in-config\n',
  );
  fs.writeFileSync(path.join(work, 'SOUL.md'), '# Soul\nBe brief.\n');
  fs.writeFileSync(
    path.join(work, 'skills', 'coding', 'refactor', 'SKILL.md'),
    '---\nname: refactor\ndescription: "Refactor code safely"\n---\nbody',
  );
  fs.writeFileSync(path.join(work, 'skills', 'notes', 'daily', 'SKILL.md'), 'no front matter');
  fs.writeFileSync(path.join(work, 'skills', '.hidden', 'x', 'SKILL.md'), 'hidden');
  fs.writeFileSync(path.join(work, 'memories', 'people.md'), 'Ana likes tea.');
  fs.writeFileSync(path.join(work, 'memories', 'big.txt'), 'x'.repeat(40 * 1024));
  fs.writeFileSync(path.join(work, 'memories', 'image.png'), 'not a memory');
  fs.symlinkSync('/etc/passwd', path.join(work, 'memories', 'passwd.md'));
  fs.writeFileSync(path.join(home, 'config.yaml'), 'description: Default\n');
  return home;
}

describe('profile files, read side (spec 4.7)', () => {
  let relay: TestRelay;
  let token: string;
  beforeAll(async () => {
    relay = await startRelay({ home: profileTree() });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());
  const phone = () => ({ ...REMOTE, ...bearer(token) });

  it('config: a phone gets only the public schema and no host path; the operator on loopback the whole file', async () => {
    const remote = await call(relay, 'GET', '/api/profiles/work/config', undefined, phone());
    expect(remote).toMatchObject({ status: 200, body: { profile: 'work', path: 'config.yaml', readonly: true } });
    expect(remote.body.config).toEqual({ description: 'Work persona', model: { default: 'gpt-5' } });
    expect(JSON.stringify(remote.body)).not.toContain('sk-secret');
    const local = await call(relay, 'GET', '/api/profiles/work/config');
    expect(local.body.config.providers.openai.api_key).toBe('sk-secret-in-config');
    expect((await call(relay, 'GET', '/api/profiles/default/config', undefined, phone())).body.config).toEqual({ description: 'Default' });
  });

  it('skills from skills/<category>/<name>/SKILL.md with their description; soul; memory within caps, no symlink followed', async () => {
    const skills = await call(relay, 'GET', '/api/profiles/work/skills', undefined, phone());
    expect(skills.body).toEqual({
      profile: 'work',
      total: 2,
      skills: [
        { name: 'refactor', category: 'coding', description: 'Refactor code safely', path: 'skills/coding/refactor/SKILL.md', enabled: true },
        { name: 'daily', category: 'notes', description: '', path: 'skills/notes/daily/SKILL.md', enabled: true },
      ],
    });
    expect((await call(relay, 'GET', '/api/profiles/work/soul', undefined, phone())).body).toEqual({
      profile: 'work',
      path: 'SOUL.md',
      content: '# Soul\nBe brief.\n',
      exists: true,
      size_bytes: 17,
      truncated: false,
      etag: expect.stringMatching(/^"sha256:[0-9a-f]{32}"$/),
    });
    expect((await call(relay, 'GET', '/api/profiles/default/soul', undefined, phone())).body).toMatchObject({ exists: false, content: '' });
    const memory = await call(relay, 'GET', '/api/profiles/work/memory', undefined, phone());
    expect(memory.body.total).toBe(2);
    expect(memory.body.entries.map((e: { filename: string }) => e.filename)).toEqual(['big.txt', 'people.md']);
    // Whole up to the write cap (1 MiB): the app edits what it is served (test/compat/app-profile-inspector).
    expect(memory.body.entries[0]).toMatchObject({ name: 'big', size_bytes: 40 * 1024, truncated: false });
    expect(memory.body.entries[0].content).toHaveLength(40 * 1024);
    expect(JSON.stringify(memory.body)).not.toContain('root:');
  });

  it('refuses odd names (400) and unknown profiles (404); a stranger gets 401', async () => {
    const statuses: Record<string, number> = {};
    for (const bad of ['%2E%2E', '.hidden', 'a%2Fb', 'x'.repeat(65)])
      statuses[bad] = (await call(relay, 'GET', `/api/profiles/${bad}/config`, undefined, phone())).status;
    // `..` (even as %2E%2E) is a dot segment the URL itself resolves away: /api/config, no such route.
    expect(statuses).toEqual({ '%2E%2E': 404, '.hidden': 400, 'a%2Fb': 400, ['x'.repeat(65)]: 400 });
    expect((await call(relay, 'GET', '/api/profiles/nobody/skills', undefined, phone())).status).toBe(404);
    expect((await call(relay, 'GET', '/api/profiles/work/config', undefined, REMOTE)).status).toBe(401);
  });
});

describe('profile files, the write side: PUT soul and memory (atomic, If-Match, an event with the digest)', () => {
  let relay: TestRelay;
  let token: string;
  let work: string;
  beforeAll(async () => {
    const home = profileTree();
    work = path.join(home, 'profiles', 'work');
    relay = await startRelay({ home });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());
  const phone = (extra: Record<string, string> = {}) => ({ ...REMOTE, ...bearer(token), ...extra });
  const put = async (route: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${relay.url}${route}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, etag: res.headers.get('etag'), body: (await res.json()) as Record<string, any> };
  };
  const events = () => readEvents(relay.home).filter((e) => e.type === 'profile.file_written');

  it('replaces SOUL.md as the app sends it (no If-Match), answers its shape, records the digest not the text', async () => {
    const r = await put('/api/profiles/work/soul', { content: 'Be kind and brief.\n' }, phone());
    expect(r).toMatchObject({ status: 200, body: { ok: true, profile: 'work', path: 'SOUL.md', bytes_written: 19 } });
    expect(fs.readFileSync(path.join(work, 'SOUL.md'), 'utf8')).toBe('Be kind and brief.\n');
    expect(fs.readdirSync(work).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const e = events().at(-1)!;
    expect(e.data).toEqual({
      profile: 'work',
      file: 'SOUL.md',
      sha256: createHash('sha256').update('Be kind and brief.\n').digest('hex'),
      bytes: 19,
      replaced: true,
    });
    expect(JSON.stringify(readEvents(relay.home))).not.toContain('kind and brief');
    const got = await call(relay, 'GET', '/api/profiles/work/soul', undefined, phone());
    expect(got.body.etag).toBe(r.etag);
  });

  it('honours If-Match: a stale ETag is 412 with nothing written; the current one writes', async () => {
    const { body } = await call(relay, 'GET', '/api/profiles/work/soul', undefined, phone());
    const first = await put('/api/profiles/work/soul', { content: 'editor A\n' }, phone({ 'if-match': body.etag }));
    expect(first.status).toBe(200);
    const before = events().length;
    const stale = await put('/api/profiles/work/soul', { content: 'editor B\n' }, phone({ 'if-match': body.etag }));
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ ok: false, code: 'profile.stale', etag: first.etag });
    expect(fs.readFileSync(path.join(work, 'SOUL.md'), 'utf8')).toBe('editor A\n');
    expect(events()).toHaveLength(before);
    expect((await put('/api/profiles/work/soul', { content: 'editor B\n' }, phone({ 'if-match': first.etag! }))).status).toBe(200);
  });

  it('creates and replaces memory files; refuses odd names, oversized or non-string content, links and unknown profiles, writing nothing', async () => {
    const created = await put('/api/profiles/work/memory/projects.md', { content: 'Ship voice.' }, phone());
    expect(created.body).toEqual({ ok: true, profile: 'work', filename: 'projects.md', path: 'memories/projects.md', bytes_written: 11 });
    expect(events().at(-1)!.data).toMatchObject({ file: 'memories/projects.md', replaced: false });
    const list = await call(relay, 'GET', '/api/profiles/work/memory', undefined, phone());
    expect(list.body.entries.map((e: { filename: string }) => e.filename)).toContain('projects.md');
    const before = events().length;
    const files = fs.readdirSync(path.join(work, 'memories')).sort();
    for (const [route, body, status] of [
      ['/api/profiles/work/memory/x.exe', { content: 'x' }, 400],
      ['/api/profiles/work/memory/.hidden.md', { content: 'x' }, 400],
      ['/api/profiles/work/memory/a%2Fb.md', { content: 'x' }, 400],
      ['/api/profiles/work/memory/big.md', { content: 'x'.repeat(1024 * 1024 + 1) }, 413],
      ['/api/profiles/work/memory/n.md', { content: 5 }, 400],
      ['/api/profiles/work/memory/passwd.md', { content: 'owned' }, 403],
      ['/api/profiles/nobody/soul', { content: 'x' }, 404],
    ] as const) {
      const r = await put(route, body, phone());
      expect([route, r.status]).toEqual([route, status]);
    }
    expect((await put('/api/profiles/work/soul', { content: 'x' }, REMOTE)).status).toBe(401);
    expect(events()).toHaveLength(before);
    expect(fs.readdirSync(path.join(work, 'memories')).sort()).toEqual(files);
    expect(fs.readFileSync('/etc/passwd', 'utf8')).not.toContain('owned');
  });
});

describe('GET /api/profiles/{name}/avatar', () => {
  it('serves the first conventional image by its bytes; 404 naming what it looks for; 415 for a non-image; links not followed', async () => {
    const home = profileTree();
    const work = path.join(home, 'profiles', 'work');
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('tiny png body')]);
    fs.writeFileSync(path.join(work, 'Icon.PNG'), Buffer.from('GIF89a gif body'));
    fs.writeFileSync(path.join(work, 'avatar.png'), png);
    fs.mkdirSync(path.join(home, 'profiles', 'fake'), { recursive: true });
    fs.writeFileSync(path.join(home, 'profiles', 'fake', 'avatar.jpg'), 'not an image');
    fs.mkdirSync(path.join(home, 'profiles', 'linked'), { recursive: true });
    fs.symlinkSync(path.join(work, 'avatar.png'), path.join(home, 'profiles', 'linked', 'avatar.png'));
    const relay = await startRelay({ home });
    try {
      const p = await pairPhone(relay);
      p.phone.close();
      const res = await fetch(`${relay.url}/api/profiles/work/avatar`, { headers: { ...REMOTE, ...bearer(p.token) } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(res.headers.get('cache-control')).toBe('private, max-age=3600');
      expect(Buffer.from(await res.arrayBuffer())).toEqual(png);
      fs.rmSync(path.join(work, 'avatar.png'));
      const icon = await fetch(`${relay.url}/api/profiles/work/avatar`, { headers: bearer(p.token) });
      expect(icon.headers.get('content-type')).toBe('image/gif');
      await icon.arrayBuffer();
      const none = await call(relay, 'GET', '/api/profiles/default/avatar', undefined, bearer(p.token));
      expect(none.status).toBe(404);
      expect(none.body.expected_names).toContain('avatar.png');
      expect((await call(relay, 'GET', '/api/profiles/fake/avatar', undefined, bearer(p.token))).status).toBe(415);
      expect((await call(relay, 'GET', '/api/profiles/linked/avatar', undefined, bearer(p.token))).status).toBe(404);
      expect((await call(relay, 'GET', '/api/profiles/work/avatar', undefined, REMOTE)).status).toBe(401);
    } finally {
      await relay.close();
    }
  });
});
