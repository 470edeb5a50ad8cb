import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { imageRowsSql, phoneSessionsSql } from '../../apps/relay/src/agent-store/agent-queries';
import { BUSY_BACKOFF_MS } from '../../apps/relay/src/agent-store/state-db';
import { AgentStore, toolCalls } from '../support/agent-store';
import { bearer, pairPhone, startRelay, type TestRelay } from '../support/harness';
import { call, REMOTE, type Json } from '../support/http';
import { cpuMsDuring } from '../support/timing';

/**
 * `/phone/threads` and `/chat/image-activity` read the agent host's own session store (`state.db` beside
 * the service config, and `profiles/<name>/state.db`), read-only, as the reference relay does
 * (plugin/relay/session_store.py, image_activity.py). The phone's calls carry its bearer through a proxy
 * header, so the relay treats them as remote.
 */
describe('the agent session store behind /phone/threads and /chat/image-activity', () => {
  let relay: TestRelay;
  let token: string;
  let root: string;
  const T0 = 1_772_366_400; // 2026-03-01T12:00:00Z, the relay's manual clock
  const asPhone = () => ({ ...bearer(token), ...REMOTE });
  const threads = async () => {
    const r = await call(relay, 'GET', '/phone/threads', undefined, asPhone());
    expect(r.status).toBe(200);
    return r.body;
  };
  const activity = async (query: string, status = 200) => {
    const r = await call(relay, 'GET', `/chat/image-activity${query}`, undefined, asPhone());
    expect([query, r.status]).toEqual([query, status]);
    return r.body;
  };
  const post = (body: Json) => call(relay, 'POST', '/phone/message', body);
  const store = (file = root, opts: ConstructorParameters<typeof AgentStore>[1] = {}) => new AgentStore(file, opts);
  const profileDir = (name: string, withConfig = true) => {
    const dir = path.join(relay.home, 'profiles', name);
    fs.mkdirSync(dir, { recursive: true });
    if (withConfig) fs.writeFileSync(path.join(dir, 'config.yaml'), 'model: x\n');
    return dir;
  };
  /** A clean agent home: no stores, no profiles, no marker (the relay's own files stay). */
  const clean = () => {
    for (const f of fs.readdirSync(relay.home))
      if (f.startsWith('state.db') || f === 'profiles' || f === 'active_profile' || f === 'elsewhere')
        fs.rmSync(path.join(relay.home, f), { recursive: true, force: true });
  };

  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    root = path.join(relay.home, 'state.db');
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay?.close());
  beforeEach(clean);

  describe('/phone/threads', () => {
    it('without a store: says so (no host path), never a 500, and the relay threads keep session_id ""', async () => {
      await post({ chat_id: 'lonely', text: 'hi', title: 'Lonely' });
      const body = await threads();
      expect(body.session_store).toEqual({ available: false, reason: 'not found' });
      expect(JSON.stringify(body)).not.toContain(relay.home);
      expect(body.threads.find((t: Json) => t.chat_id === 'lonely')).toMatchObject({ session_id: '', source: 'relay', session_id_from: null });
      expect(fs.existsSync(root)).toBe(false);
    });

    it("a thread posted without session_id gets its chat's latest phone session from the store; one the platform named keeps its own", async () => {
      await post({ chat_id: 'ops', text: 'deploy done', title: 'Ops' });
      await post({ chat_id: 'named', text: 'hello', session_id: 'platform_session_1' });
      const s = store();
      s.session({ id: '20260301_100000_aaaaaa', chat_id: 'ops', started_at: T0 - 7200, last_activity_at: T0 - 3600, title: 'Ops (old)' });
      s.session({ id: '20260301_110000_bbbbbb', chat_id: 'ops', started_at: T0 - 3600, last_activity_at: T0 - 60, title: 'Ops' });
      // Started later but idle since: by last activity the one above is the latest.
      s.session({ id: '20260301_113000_cccccc', chat_id: 'ops', started_at: T0 - 1800, title: 'Ops (idle)' });
      s.session({ id: 'store_for_named', chat_id: 'named', started_at: T0 });
      s.close();
      const body = await threads();
      expect(body.session_store).toEqual({ available: true, stores: 1, sessions: 4 });
      const relayRows = body.threads.filter((t: Json) => t.source === 'relay');
      expect(relayRows.find((t: Json) => t.chat_id === 'ops')).toMatchObject({
        session_id: '20260301_110000_bbbbbb',
        session_id_from: 'agent_store',
        title: 'Ops',
        messages: 1,
      });
      expect(relayRows.find((t: Json) => t.chat_id === 'named')).toMatchObject({ session_id: 'platform_session_1', session_id_from: 'platform' });
      // Every other store session follows once, as a mapping with zero counts, most recent first.
      const extra = body.threads.filter((t: Json) => t.source === 'agent_store');
      expect(extra.map((t: Json) => [t.session_id, t.chat_id, t.messages, t.replies, t.queued, t.last])).toEqual([
        ['store_for_named', 'named', 0, 0, 0, null],
        ['20260301_113000_cccccc', 'ops', 0, 0, 0, null],
        ['20260301_100000_aaaaaa', 'ops', 0, 0, 0, null],
      ]);
      expect(extra[2]).toMatchObject({ title: 'Ops (old)', last_activity: T0 - 3600, session_id_from: 'agent_store' });
      // No session id appears twice (the app's associate() would keep only one of them).
      const ids = body.threads.map((t: Json) => t.session_id).filter(Boolean);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('lists only phone sessions with a usable chat_id: other sources, blank, null and mistyped values are skipped', async () => {
      const s = store();
      s.session({ id: 'phone_ok', chat_id: 'chat-1', title: 'Fine' });
      s.session({ id: 'discord_1', source: 'discord', chat_id: 'chat-1' });
      s.session({ id: 'tui_1', source: 'tui', chat_id: 'chat-2' });
      s.session({ id: 'cli_1', source: 'cli', chat_id: null });
      s.session({ id: 'blank_chat', chat_id: '' });
      s.session({ id: 'space_chat', chat_id: '   ' });
      s.session({ id: 'null_chat', chat_id: null });
      s.session({ id: 'ctrl_chat', chat_id: 'a\nb' });
      s.session({ id: 'long_chat', chat_id: 'c'.repeat(257) });
      // A TEXT column keeps a blob as a blob (numbers become text by the column's affinity).
      s.session({ id: 'blob_chat', chat_id: Buffer.from('chat-1') });
      s.session({ id: Buffer.from('blob-id'), chat_id: 'chat-blob-id' });
      s.session({ id: '   ', chat_id: 'chat-blank-id' });
      s.session({ id: 'bad_times', chat_id: 'chat-3', started_at: 'yesterday', last_activity_at: 1e300, title: Buffer.from('T') });
      s.close();
      const body = await threads();
      expect(
        body.threads.filter((t: Json) => t.source === 'agent_store').map((t: Json) => [t.session_id, t.chat_id, t.title, t.last_activity]),
      ).toEqual([
        ['phone_ok', 'chat-1', 'Fine', T0],
        ['bad_times', 'chat-3', null, null],
      ]);
      expect(body.session_store).toMatchObject({ available: true, sessions: 2 });
    });

    it('reads the root store and every profile store, root first: a session id in both is listed once, as the root has it', async () => {
      store().session({ id: 'shared', chat_id: 'from-root' }).session({ id: 'root_only', chat_id: 'r' }).close();
      store(path.join(profileDir('work'), 'state.db'))
        .session({ id: 'shared', chat_id: 'from-work' })
        .session({ id: 'work_only', chat_id: 'w', last_activity_at: T0 + 10 })
        .close();
      profileDir('empty'); // a profile that never ran has no store: skipped quietly
      const body = await threads();
      expect(body.session_store).toEqual({ available: true, stores: 2, sessions: 3 });
      expect(
        body.threads.map((t: Json) => [t.session_id, t.chat_id]).filter(([id]: string[]) => ['shared', 'root_only', 'work_only'].includes(id)),
      ).toEqual([
        ['work_only', 'w'],
        ['shared', 'from-root'],
        ['root_only', 'r'],
      ]);
      // Only profile stores: still available.
      fs.rmSync(root);
      expect((await threads()).session_store).toEqual({ available: true, stores: 1, sessions: 2 });
    });

    it('an older agent store without chat_id: available false with the reason, relay threads unchanged', async () => {
      await post({ chat_id: 'old-agent', text: 'x' });
      store(root, { olderAgent: true }).session({ id: 's1' }).close();
      const body = await threads();
      expect(body.session_store).toEqual({
        available: false,
        reason: 'no chat_id column (older agent)',
        unreadable: [{ profile: 'default', reason: 'no chat_id column (older agent)' }],
      });
      expect(body.threads.find((t: Json) => t.chat_id === 'old-agent')).toMatchObject({ session_id: '', source: 'relay' });
      // One unreadable profile store does not hide a good root store.
      clean();
      store().session({ id: 'good', chat_id: 'g' }).close();
      fs.writeFileSync(path.join(profileDir('broken'), 'state.db'), 'not a database at all'.repeat(200));
      expect((await threads()).session_store).toEqual({
        available: true,
        stores: 1,
        sessions: 1,
        unreadable: [{ profile: 'broken', reason: 'not an SQLite database' }],
      });
    });
  });

  describe('/chat/image-activity', () => {
    const q = (session: string, extra = '') => `?profile=default&session_id=${session}${extra}`;

    it('running, then completed when the tool answers; since honoured; other tools, inactive and malformed rows ignored', async () => {
      const s = store();
      s.session({ id: 'turn', chat_id: 'c' });
      s.imageCall('turn', 'call_a', T0 + 1, T0 + 9);
      s.imageCall('turn', 'call_b', T0 + 2);
      s.message({ session_id: 'turn', role: 'assistant', tool_calls: toolCalls(['call_web', 'web_search']), timestamp: T0 + 3 });
      s.message({ session_id: 'turn', role: 'tool', tool_call_id: 'call_web', tool_name: 'web_search', timestamp: T0 + 4 });
      // The flat {id, name} shape counts too.
      s.message({
        session_id: 'turn',
        role: 'assistant',
        tool_calls: JSON.stringify([{ id: 'call_flat', name: 'image_generate' }]),
        timestamp: T0 + 5,
      });
      // Rewound (inactive) rows are not part of the conversation any more.
      s.message({ session_id: 'turn', role: 'assistant', tool_calls: toolCalls(['call_gone', 'image_generate']), timestamp: T0 + 6, active: 0 });
      for (const bad of [
        '{not json',
        '"image_generate"',
        JSON.stringify({ id: 'x', name: 'image_generate' }),
        JSON.stringify([{ id: 5, name: 'image_generate' }]),
      ])
        s.message({ session_id: 'turn', role: 'assistant', tool_calls: bad, timestamp: T0 + 7 });
      s.message({ session_id: 'turn', role: 'assistant', tool_calls: Buffer.from(toolCalls(['call_blob', 'image_generate'])), timestamp: T0 + 7 });
      s.message({ session_id: 'turn', role: 'assistant', tool_calls: toolCalls(['call_textts', 'image_generate']), timestamp: 'soon' });
      // A tool answer under another tool name does not complete the image call.
      s.message({ session_id: 'turn', role: 'tool', tool_call_id: 'call_b', tool_name: 'web_search', timestamp: T0 + 8 });
      s.message({ session_id: 'other', role: 'assistant', tool_calls: toolCalls(['call_other', 'image_generate']), timestamp: T0 + 1 });
      s.close();
      const body = await activity(q('turn'));
      expect(body.session_store).toEqual({ available: true, profile: 'default' });
      expect(body.activities).toEqual([
        {
          call_id: 'call_a',
          tool_name: 'image_generate',
          state: 'completed',
          started_at: T0 + 1,
          completed_at: T0 + 9,
          progress: null,
          error_code: null,
        },
        {
          call_id: 'call_b',
          tool_name: 'image_generate',
          state: 'running',
          started_at: T0 + 2,
          completed_at: null,
          progress: null,
          error_code: null,
        },
        {
          call_id: 'call_flat',
          tool_name: 'image_generate',
          state: 'running',
          started_at: T0 + 5,
          completed_at: null,
          progress: null,
          error_code: null,
        },
      ]);
      // `since` drops calls that started before it, as the app's turn window does (and Kotlin's exponent form is read).
      expect((await activity(q('turn', `&since=${T0 + 2}`))).activities.map((a: Json) => a.call_id)).toEqual(['call_b', 'call_flat']);
      expect((await activity(q('turn', '&since=1.7723664045E9'))).activities.map((a: Json) => a.call_id)).toEqual(['call_flat']);
      expect((await activity(q('turn', '&since=1.8E9'))).activities).toEqual([]);
      expect((await activity(q('never'))).activities).toEqual([]);
    });

    it("merges the store's calls with the platform's feed: one entry per call, the platform's failure kept", async () => {
      store()
        .imageCall('mix', 'call_1', T0 - 5, T0 + 1)
        .imageCall('mix', 'call_2', T0 - 4)
        .close();
      const feed = (body: Json) => call(relay, 'POST', '/chat/image-activity', body);
      expect((await feed({ session_id: 'mix', call_id: 'call_1', status: 'started' })).status).toBe(200);
      expect((await feed({ session_id: 'mix', call_id: 'call_2', status: 'started' })).status).toBe(200);
      expect((await feed({ session_id: 'mix', call_id: 'call_2', status: 'failed', error_code: 'content_policy' })).status).toBe(200);
      expect((await feed({ session_id: 'mix', call_id: 'call_3', status: 'started' })).status).toBe(200);
      const body = await activity(q('mix'));
      expect(body.activities.map((a: Json) => [a.call_id, a.state, a.started_at, a.completed_at, a.error_code])).toEqual([
        ['call_1', 'completed', T0 - 5, T0 + 1, null],
        ['call_2', 'failed', T0 - 4, T0, 'content_policy'],
        ['call_3', 'running', T0, null, null],
      ]);
      // The per-report view stays the platform's own.
      expect(body.activity.map((a: Json) => [a.call_id, a.status])).toEqual([
        ['call_1', 'started'],
        ['call_2', 'started'],
        ['call_2', 'failed'],
        ['call_3', 'started'],
      ]);
    });

    it('without a store: session_store says why and the platform feed still answers', async () => {
      await call(relay, 'POST', '/chat/image-activity', { session_id: 'feed-only', call_id: 'c1', status: 'started' });
      const body = await activity(q('feed-only'));
      expect(body.session_store).toEqual({ available: false, reason: 'not found' });
      expect(body.activities.map((a: Json) => a.call_id)).toEqual(['c1']);
    });

    it("a named profile reads its own store; an unknown one is 404 profile_not_found in the relay's error shape", async () => {
      store().imageCall('s', 'root_call', T0).close();
      store(path.join(profileDir('work'), 'state.db'))
        .imageCall('s', 'work_call', T0)
        .close();
      const work = await activity('?profile=work&session_id=s');
      expect(work.session_store).toEqual({ available: true, profile: 'work' });
      expect(work.activities.map((a: Json) => a.call_id)).toEqual(['work_call']);
      expect(work.profile).toBe('work');
      for (const name of ['nope', '..', '.hidden', 'a%2Fb', 'x'.repeat(65)]) {
        const r = await activity(`?profile=${name}&session_id=s`, 404);
        expect(r).toMatchObject({ ok: false, code: 'image_activity.profile_not_found' });
        expect(typeof r.error).toBe('string');
      }
      // A profile directory without a store yet: 200, nothing from the store.
      profileDir('fresh');
      expect((await activity('?profile=fresh&session_id=s')).session_store).toEqual({ available: false, reason: 'not found' });
    });

    it('profile=default follows the active_profile marker, and fails closed to the root on a bad value', async () => {
      store().imageCall('s', 'root_call', T0).close();
      store(path.join(profileDir('work'), 'state.db'))
        .imageCall('s', 'work_call', T0)
        .close();
      const marker = path.join(relay.home, 'active_profile');
      const reads = async () => {
        const b = await activity(q('s'));
        return [b.session_store.profile, b.activities.map((a: Json) => a.call_id)];
      };
      expect(await reads()).toEqual(['default', ['root_call']]);
      fs.writeFileSync(marker, 'work\n');
      expect(await reads()).toEqual(['work', ['work_call']]);
      for (const bad of ['Work', '../work', 'default', '', 'ghost', 'x'.repeat(300)]) {
        fs.writeFileSync(marker, bad);
        expect([bad, ...(await reads())]).toEqual([bad, 'default', ['root_call']]);
      }
      // A profile without its config.yaml is not usable.
      fs.writeFileSync(marker, 'bare');
      store(path.join(profileDir('bare', false), 'state.db'))
        .imageCall('s', 'bare_call', T0)
        .close();
      expect(await reads()).toEqual(['default', ['root_call']]);
      // A FIFO or a symlink named active_profile is not read (and never blocks the relay).
      fs.rmSync(marker);
      execFileSync('mkfifo', [marker]);
      expect(await reads()).toEqual(['default', ['root_call']]);
      fs.rmSync(marker);
      const target = path.join(os.tmpdir(), `marker-${process.pid}`);
      fs.writeFileSync(target, 'work');
      fs.symlinkSync(target, marker);
      expect(await reads()).toEqual(['default', ['root_call']]);
      fs.rmSync(target);
    });
  });

  it('RELAY_AGENT_STATE_DB names the root store; profiles and the marker are read beside it, the service home is not', async () => {
    const agentHome = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-home-'));
    store(path.join(agentHome, 'state.db')).session({ id: 'set_root', chat_id: 'a' }).imageCall('s', 'set_root_call', T0).close();
    const work = path.join(agentHome, 'profiles', 'work');
    store(path.join(work, 'state.db')).session({ id: 'set_work', chat_id: 'b' }).imageCall('s', 'set_work_call', T0).close();
    store().session({ id: 'svc_home_root', chat_id: 'c' }).close();
    const other = await startRelay({ env: { RELAY_AGENT_STATE_DB: path.join(agentHome, 'state.db') } });
    try {
      const p = await pairPhone(other);
      p.phone.close();
      const get = async (url: string) => (await call(other, 'GET', url, undefined, { ...bearer(p.token), ...REMOTE })).body;
      expect((await get('/phone/threads')).threads.map((t: Json) => t.session_id).sort()).toEqual(['set_root', 'set_work']);
      expect((await get('/chat/image-activity?session_id=s')).activities.map((a: Json) => a.call_id)).toEqual(['set_root_call']);
      expect((await get('/chat/image-activity?profile=work&session_id=s')).activities.map((a: Json) => a.call_id)).toEqual(['set_work_call']);
      fs.writeFileSync(path.join(work, 'config.yaml'), 'model: x\n');
      fs.writeFileSync(path.join(agentHome, 'active_profile'), 'work');
      expect((await get('/chat/image-activity?session_id=s')).session_store).toEqual({ available: true, profile: 'work' });
    } finally {
      await other.close();
      fs.rmSync(agentHome, { recursive: true });
    }
  });

  describe('a hostile or unusual store', () => {
    it('a file that is not SQLite, an empty file, a directory, a view: available false with a reason, never a 500', async () => {
      fs.writeFileSync(root, 'SQLite format 2\0'.repeat(500));
      expect((await threads()).session_store).toMatchObject({ available: false, reason: 'not an SQLite database' });
      expect((await activity('?session_id=s')).session_store).toEqual({ available: false, reason: 'not an SQLite database' });
      fs.writeFileSync(root, '');
      expect((await threads()).session_store).toMatchObject({ available: false, reason: 'no sessions table' });
      fs.rmSync(root);
      fs.mkdirSync(root);
      expect((await threads()).session_store).toMatchObject({ available: false, reason: 'not a regular file' });
      fs.rmSync(root, { recursive: true });
      const db = new Database(root);
      db.exec(
        "CREATE VIEW sessions AS SELECT 'x' AS id, 'phone' AS source, 'c' AS chat_id; CREATE TABLE messages_real(x); CREATE VIEW messages AS SELECT * FROM messages_real",
      );
      db.close();
      expect((await threads()).session_store).toMatchObject({ available: false, reason: 'sessions is not a plain table (refused)' });
      expect((await activity('?session_id=s')).session_store).toEqual({ available: false, reason: 'messages is not a plain table (refused)' });
    });

    it('a state.db symlinked out of the agent home is refused; a symlink inside it is followed', async () => {
      const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-outside-'));
      store(path.join(outside, 'state.db')).session({ id: 'outside', chat_id: 'o' }).close();
      fs.symlinkSync(path.join(outside, 'state.db'), root);
      const body = await threads();
      expect(body.session_store).toMatchObject({ available: false, reason: 'a symlink out of the agent home (refused)' });
      expect(JSON.stringify(body)).not.toContain(outside);
      fs.rmSync(root);
      store(path.join(relay.home, 'elsewhere', 'state.db'))
        .session({ id: 'inside', chat_id: 'i' })
        .close();
      fs.symlinkSync(path.join('elsewhere', 'state.db'), root);
      expect((await threads()).threads.map((t: Json) => t.session_id)).toContain('inside');
      // A profile directory symlinked out of the home is refused the same way.
      fs.mkdirSync(path.join(relay.home, 'profiles'));
      fs.writeFileSync(path.join(outside, 'config.yaml'), 'model: x\n');
      fs.symlinkSync(outside, path.join(relay.home, 'profiles', 'linked'));
      const linked = await activity('?profile=linked&session_id=s');
      expect(linked.session_store).toEqual({ available: false, reason: 'a symlink out of the agent home (refused)' });
      fs.rmSync(outside, { recursive: true });
    });

    it('a WAL store with an open write transaction is read (committed rows only); a rollback-journal store locked exclusively is "busy", fast', async () => {
      const s = store();
      s.session({ id: 'committed', chat_id: 'c' });
      s.db.exec('BEGIN IMMEDIATE');
      s.session({ id: 'uncommitted', chat_id: 'u' });
      const body = await threads();
      expect(body.session_store).toMatchObject({ available: true, sessions: 1 });
      s.db.exec('COMMIT');
      expect((await threads()).session_store).toMatchObject({ available: true, sessions: 2 });
      s.close();

      clean();
      const j = store(root, { journal: 'delete' });
      j.session({ id: 'j1', chat_id: 'j' });
      j.imageCall('j1', 'call_j', T0);
      expect((await threads()).session_store).toMatchObject({ available: true });
      j.db.exec('BEGIN EXCLUSIVE');
      j.session({ id: 'j2', chat_id: 'j' });
      const started = Date.now();
      expect((await threads()).session_store).toMatchObject({ available: false, reason: 'busy (the agent holds a lock on it)' });
      expect((await activity('?session_id=j1')).session_store).toEqual({ available: false, reason: 'busy (the agent holds a lock on it)' });
      expect(Date.now() - started).toBeLessThan(2_000);
      j.db.exec('COMMIT');
      // Within the back-off the store is not tried again; after it, it is.
      expect((await threads()).session_store).toMatchObject({ available: false });
      relay.clock.advance(BUSY_BACKOFF_MS);
      expect((await threads()).session_store).toMatchObject({ available: true, sessions: 2 });
      expect((await activity('?session_id=j1')).activities.map((a: Json) => a.call_id)).toEqual(['call_j']);
      j.close();
    });

    it('a 10 MB title comes back cut to 256 characters', async () => {
      store()
        .session({ id: 'huge', chat_id: 'h', title: 'T'.repeat(10 * 1024 * 1024) })
        .close();
      const r = await call(relay, 'GET', '/phone/threads', undefined, asPhone());
      const huge = r.body.threads.find((t: Json) => t.session_id === 'huge');
      expect(huge.title).toBe('T'.repeat(256));
      expect(JSON.stringify(r.body).length).toBeLessThan(10_000);
    });

    it('the store is never written, and a store replaced on disk is read afresh', async () => {
      const s = store();
      s.session({ id: 'v1', chat_id: 'c' });
      s.imageCall('v1', 'call_v1', T0);
      s.db.pragma('wal_checkpoint(TRUNCATE)');
      s.close();
      const digest = () => createHash('sha256').update(fs.readFileSync(root)).digest('hex');
      const before = digest();
      const mtime = fs.statSync(root).mtimeMs;
      await threads();
      await activity('?session_id=v1');
      expect(digest()).toBe(before);
      expect(fs.statSync(root).mtimeMs).toBe(mtime);
      // The agent replaces the file (a restore, a migration by copy): the next read sees the new one.
      const next = path.join(relay.home, 'state.db.new');
      store(next).session({ id: 'v2', chat_id: 'c' }).close();
      fs.renameSync(next, root);
      for (const f of ['-wal', '-shm']) fs.rmSync(root + f, { force: true });
      expect((await threads()).threads.filter((t: Json) => t.source === 'agent_store').map((t: Json) => t.session_id)).toEqual(['v2']);
      // A store that is gone has its connection closed: the relay keeps no descriptor of a deleted file.
      const held = () =>
        fs.readdirSync('/proc/self/fd').filter((fd) => {
          try {
            return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(root);
          } catch {
            return false;
          }
        }).length;
      expect(held()).toBeGreaterThan(0);
      fs.rmSync(root);
      expect((await threads()).session_store).toEqual({ available: false, reason: 'not found' });
      expect(held()).toBe(0);
    });

    it('a store of 100k messages answers in a few ms: the query walks the agent index on messages(session_id, timestamp)', async () => {
      const s = store();
      const insert = s.db.prepare(
        'INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, tool_name, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)',
      );
      s.db.transaction(() => {
        for (let i = 0; i < 100_000; i++) {
          const session = i % 10 === 0 ? 'busy_session' : `other_${i % 97}`;
          if (i % 500 === 0) insert.run(session, 'assistant', '', toolCalls([`call_${i}`, 'image_generate']), null, null, T0 + i);
          else if (i % 500 === 10) insert.run(session, 'tool', '{}', null, `call_${i - 10}`, 'image_generate', T0 + i);
          else insert.run(session, i % 2 ? 'user' : 'assistant', 'x'.repeat(200), null, null, null, T0 + i);
        }
      })();
      for (let i = 0; i < 2000; i++) s.session({ id: `p_${String(i).padStart(5, '0')}`, chat_id: `chat_${i}`, started_at: T0 + i });
      s.close();
      const plan = (sql: string, ...args: unknown[]) => {
        const db = new Database(root, { readonly: true });
        const cols = new Set((db.prepare('PRAGMA table_info(messages)').all() as Array<{ name: string }>).map((c) => c.name));
        const scols = new Set((db.prepare('PRAGMA table_info(sessions)').all() as Array<{ name: string }>).map((c) => c.name));
        const text = sql === 'messages' ? imageRowsSql(cols) : phoneSessionsSql(scols);
        const rows = db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...args) as Array<{ detail: string }>;
        db.close();
        return rows.map((r) => r.detail).join(' | ');
      };
      expect(plan('messages', 'busy_session', 0)).toMatch(/USING INDEX idx_messages_session \(session_id=\? AND timestamp>\?\)/);
      expect(plan('messages', 'busy_session', 0)).not.toMatch(/TEMP B-TREE/);
      expect(plan('sessions')).toMatch(/USING INDEX idx_sessions_source_id \(source=\?\)/);
      expect(plan('sessions')).not.toMatch(/TEMP B-TREE/);

      await activity('?session_id=busy_session'); // opens the connection
      const times: number[] = [];
      let last: Json = {};
      // CPU time of the in-process relay (and this client), not wall time: on a loaded machine the wall-time
      // medians were 23 and 117 ms against these bounds. The query is synchronous SQLite work on the relay's
      // thread, so a plan that scans the 100k rows costs CPU however busy the machine is.
      for (let i = 0; i < 20; i++) {
        const { result, cpuMs } = await cpuMsDuring(() => activity('?session_id=busy_session'));
        last = result;
        times.push(cpuMs);
      }
      times.sort((a, b) => a - b);
      const median = times[10];
      // The newest 250 rows of the session: 25 image calls among them, the last ones not answered within the window.
      expect(last.activities.length).toBeGreaterThan(0);
      expect(last.activities.length).toBeLessThanOrEqual(250);
      // 2.8 ms of CPU beside two busy loops, 7.3 ms at load average 13; 44 ms with the store's indexes dropped
      // (the wall-time bound of 100 ms could not tell those apart, only the plans above did).
      expect(median).toBeLessThan(30);
      const tt: number[] = [];
      for (let i = 0; i < 10; i++) {
        const { result: b, cpuMs } = await cpuMsDuring(() => threads());
        expect(b.session_store).toMatchObject({ available: true, sessions: 1000 });
        tt.push(cpuMs);
      }
      tt.sort((a, b) => a - b);
      expect(tt[5]).toBeLessThan(250); // 18.5-19 ms of CPU beside two busy loops
      process.stdout.write(
        `agent store, HTTP round trip median CPU: image-activity ${median.toFixed(2)} ms, threads (1000 listed) ${tt[5].toFixed(2)} ms\n`,
      );
    });
  });
});
