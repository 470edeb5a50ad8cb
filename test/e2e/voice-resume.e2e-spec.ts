import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { bearer, pairPhone, readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { AppVoiceSocket, sleep, streamingAgent, streamOf, until, type Json } from '../support/voice-client';

/**
 * Voice session resume (issue 22.4): a session's socket that drops leaves the session running for the
 * grace (RELAY_VOICE_RESUME_GRACE_SECONDS: 300 s by default, the app's retry window, pinned in
 * test/compat/app-voice-window; 30 s here, the reference relay's), and only its own caller, with its resume
 * token, while its grant holds, with every frame it lacks still held, takes it over again.
 */
jest.setTimeout(60_000);

const NO_CLOUD = { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' };
const API_KEY = 'api-key-for-voice-resume-0123456789';
const LONG = 'A long answer that keeps the speech engine busy for a while. '.repeat(40);

type Session = { id: string; path: string; token: string; body: Json };

async function create(relay: TestRelay, kind: 'output' | 'realtime-agent', headers: Record<string, string>, body: Json = {}): Promise<Session> {
  const r = await call(relay, 'POST', `/voice/${kind}/session`, body, headers);
  if (r.status !== 200) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.session_id, path: r.body.websocket_path, token: r.body.resume_token, body: r.body };
}

const eventsOf = (relay: TestRelay, type: string, id: string) => readEvents(relay.home).filter((e) => e.type === type && e.data.sessionId === id);

/** Opens a session's first socket and waits for its ready frame. */
async function opened(relay: TestRelay, s: Session, headers: Record<string, string>, ack = true): Promise<AppVoiceSocket> {
  const v = new AppVoiceSocket(relay, s.path, headers, ack);
  expect(await v.open()).toBe(101);
  await until(() => v.has('voice.session.ready'));
  return v;
}

/**
 * Drops the socket and waits until the relay recorded the drop: durable, not only written (the line is in
 * the file before its fsync, and until then the session counts as attached for the expiry sweep).
 */
async function dropped(relay: TestRelay, v: AppVoiceSocket, s: Session): Promise<void> {
  await v.drop();
  await until(() => eventsOf(relay, 'voice.session_detached', s.id).length > 0, 10_000, 'the drop');
  await until(() => relay.loop.models.voice.session(s.id)?.detached === true, 10_000, 'the drop, durable');
}

async function refused(v: AppVoiceSocket): Promise<{ frame: Json; close: { code: number; reason: string } }> {
  const close = await v.closed;
  const frame = v.frames.find((f) => f.type === 'voice.session.resume_failed')!;
  return { frame, close };
}

describe('voice resume: who may resume, and when', () => {
  let relay: TestRelay;
  let token: string;
  let prefix: string;
  const clock = new ManualClock('2026-03-01T12:00:00.000Z');
  beforeAll(async () => {
    relay = await startRelay({
      clock,
      env: { ...NO_CLOUD, API_SERVER_KEY: API_KEY, RELAY_REALTIME_VOICE_ENABLED: '1', RELAY_VOICE_RESUME_GRACE_SECONDS: '30' },
    });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
    prefix = p.prefix;
  });
  afterAll(() => relay.close());

  it('the creation gives a resume token (only its digest is kept) and every frame an increasing event_id', async () => {
    const s = await create(relay, 'output', bearer(token));
    expect(s.body).toMatchObject({ resume_supported: true, resume_ttl_ms: 30_000 });
    expect(s.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const v = await opened(relay, s, bearer(token));
    expect(v.frames[0]).toMatchObject({ type: 'voice.session.ready', resume_supported: true, event_id: 1 });
    v.send({ type: 'response.create', text: 'short' });
    await until(() => v.has('voice.response.done'));
    const ids = v.frames.map((f) => f.event_id as number);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    v.ws.close(1000);
    await until(() => eventsOf(relay, 'voice.session_ended', s.id).length > 0);
    const log = fs.readdirSync(path.join(relay.home, 'relay')).join(' ') + JSON.stringify(readEvents(relay.home));
    expect(log).not.toContain(s.token);
    expect(relay.logs.join('')).not.toContain(s.token);
  });

  it('a close the client chose (1000, 1011 after an error, 4000) ends the session at once; only a lost connection (1006) is held', async () => {
    for (const code of [1000, 1011, 4000]) {
      const s = await create(relay, 'output', bearer(token));
      const v = await opened(relay, s, bearer(token));
      v.ws.close(code);
      await until(() => eventsOf(relay, 'voice.session_ended', s.id).length > 0);
      expect(eventsOf(relay, 'voice.session_detached', s.id)).toHaveLength(0);
    }
    const s = await create(relay, 'output', bearer(token));
    const v = await opened(relay, s, bearer(token));
    await dropped(relay, v, s);
    expect(eventsOf(relay, 'voice.session_detached', s.id)[0].data).toMatchObject({ code: 1006, resumeUntil: '2026-03-01T12:00:30.000Z' });
    expect(eventsOf(relay, 'voice.session_ended', s.id)).toHaveLength(0);
    expect(await v.resume(s.token)).toBe(101);
    await until(() => v.has('voice.session.resumed'));
    v.ws.close(1000);
  });

  it('an unknown token, or another session’s token, is refused (invalid_resume_token, 4003) and the session stays resumable', async () => {
    const a = await create(relay, 'output', bearer(token));
    const b = await create(relay, 'output', bearer(token));
    const v = await opened(relay, a, bearer(token));
    await dropped(relay, v, a);
    for (const wrong of ['x'.repeat(43), b.token]) {
      const w = new AppVoiceSocket(relay, a.path, bearer(token));
      expect(await w.resume(wrong)).toBe(101);
      const r = await refused(w);
      expect(r.frame).toMatchObject({ session_id: a.id, reason: 'invalid_resume_token' });
      expect(r.close.code).toBe(4003);
    }
    // Malformed, or a cursor past the session's last event: refused too, and still resumable.
    const bad = new AppVoiceSocket(relay, a.path, bearer(token));
    await bad.open((ws) => ws.send(JSON.stringify({ type: 'session.resume', resume_token: a.token, last_event_id: -1 })));
    expect((await refused(bad)).frame.reason).toBe('invalid_resume');
    const future = new AppVoiceSocket(relay, a.path, bearer(token));
    await future.open((ws) => ws.send(JSON.stringify({ type: 'session.resume', resume_token: a.token, last_event_id: 999 })));
    expect((await refused(future)).frame.reason).toBe('invalid_cursor');
    expect(await v.resume(a.token)).toBe(101);
    await until(() => v.has('voice.session.resumed'));
    expect(v.frames.filter((f) => f.type === 'voice.session.resumed')).toHaveLength(1);
    v.send({ type: 'response.create', text: 'back again' });
    await until(() => v.has('voice.response.done'));
    v.ws.close(1000);
  });

  it('another caller cannot resume it: another phone or the API bearer is refused before the 101 (403)', async () => {
    const s = await create(relay, 'output', bearer(token));
    const v = await opened(relay, s, bearer(token));
    await dropped(relay, v, s);
    const other = await pairPhone(relay);
    other.phone.close();
    for (const headers of [bearer(other.token), bearer(API_KEY)]) {
      const w = new AppVoiceSocket(relay, s.path, headers);
      expect(await w.resume(s.token)).toBe(403);
    }
    expect(await v.resume(s.token)).toBe(101);
    await until(() => v.has('voice.session.resumed'));
    v.ws.close(1000);
  });

  it('after the grace: the sweep ends it (resume_expired), and a late resume is told so (4008); past the grace before any sweep, likewise', async () => {
    const s = await create(relay, 'output', bearer(token));
    const v = await opened(relay, s, bearer(token));
    await dropped(relay, v, s);
    clock.advance(29_000);
    await relay.sweep();
    expect(eventsOf(relay, 'voice.session_ended', s.id)).toHaveLength(0);
    clock.advance(1_500);
    await relay.sweep();
    await until(() => eventsOf(relay, 'voice.session_ended', s.id).length > 0);
    expect(eventsOf(relay, 'voice.session_ended', s.id)[0].data).toMatchObject({ reason: 'resume_expired' });
    expect(await v.resume(s.token)).toBe(101);
    const r = await refused(v);
    expect(r.frame).toMatchObject({ reason: 'resume_expired' });
    expect(r.close.code).toBe(4008);

    const t = await create(relay, 'output', bearer(token));
    const w = await opened(relay, t, bearer(token));
    await dropped(relay, w, t);
    (clock as unknown as { t: number }).t += 31_000; // time passes, no sweep runs
    expect(await w.resume(t.token)).toBe(101);
    expect((await refused(w)).frame).toMatchObject({ reason: 'resume_expired' });
    await until(() => eventsOf(relay, 'voice.session_ended', t.id).length > 0);
    expect(eventsOf(relay, 'voice.session_ended', t.id)[0].data).toMatchObject({ reason: 'resume_expired' });
  });

  it('a socket the relay still thinks open is superseded (4000) by the one that resumes; the stream goes on there', async () => {
    const s = await create(relay, 'output', bearer(token));
    const first = await opened(relay, s, bearer(token));
    const second = new AppVoiceSocket(relay, s.path, bearer(token));
    second.lastEventId = first.lastEventId;
    expect(await second.resume(s.token)).toBe(101);
    expect(await first.closed).toEqual({ code: 4000, reason: 'superseded by a resumed socket' });
    await until(() => second.has('voice.session.resumed'));
    second.send({ type: 'response.create', text: 'on the new socket' });
    await until(() => second.has('voice.response.done'));
    expect(first.has('voice.response.started')).toBe(false);
    second.ws.close(1000);
  });

  it('revoked during the grace: the session ends (revoked) and cannot be resumed; a resumed socket closes 4403 on revoke', async () => {
    const p = await pairPhone(relay);
    p.phone.close();
    const s = await create(relay, 'output', bearer(p.token));
    const v = await opened(relay, s, bearer(p.token));
    v.send({ type: 'response.create', text: LONG });
    await until(() => v.of('voice.audio.delta').length >= 2);
    await dropped(relay, v, s);
    expect((await call(relay, 'DELETE', `/sessions/${p.prefix}`, undefined, bearer(token))).status).toBe(200);
    await until(() => eventsOf(relay, 'voice.session_ended', s.id).length > 0);
    expect(eventsOf(relay, 'voice.session_ended', s.id)[0].data).toMatchObject({ reason: 'revoked' });
    expect(await v.resume(s.token)).toBe(401);

    const q = await pairPhone(relay);
    q.phone.close();
    const t = await create(relay, 'output', bearer(q.token));
    const w = await opened(relay, t, bearer(q.token));
    await dropped(relay, w, t);
    expect(await w.resume(t.token)).toBe(101);
    await until(() => w.has('voice.session.resumed'));
    expect((await call(relay, 'DELETE', `/sessions/${q.prefix}`, undefined, bearer(token))).status).toBe(200);
    expect(await w.closed).toEqual({ code: 4403, reason: 'session revoked' });
    expect(prefix).not.toBe(q.prefix);
  });

  it('a grant lost during the grace (PATCH) ends it too; the API bearer’s session is not touched by a phone’s revoke', async () => {
    const p = await pairPhone(relay);
    p.phone.close();
    const s = await create(relay, 'output', bearer(p.token));
    const v = await opened(relay, s, bearer(p.token));
    await dropped(relay, v, s);
    const api = await create(relay, 'output', bearer(API_KEY));
    const a = await opened(relay, api, bearer(API_KEY));
    await dropped(relay, a, api);
    const res = await fetch(`${relay.url}/sessions/${p.prefix}`, {
      method: 'PATCH',
      headers: { ...bearer(p.token), 'content-type': 'application/json' },
      body: JSON.stringify({ grants: { 'voice:tts': false } }),
    });
    expect(res.status).toBe(200);
    await until(() => eventsOf(relay, 'voice.session_ended', s.id).length > 0);
    expect(eventsOf(relay, 'voice.session_ended', s.id)[0].data).toMatchObject({ reason: 'revoked' });
    expect(await a.resume(api.token)).toBe(101);
    await until(() => a.has('voice.session.resumed'));
    a.ws.close(1000);
  });
});

describe('voice resume: the replay buffer is bounded in frames and bytes', () => {
  let relay: TestRelay;
  let token: string;
  beforeAll(async () => {
    relay = await startRelay({ env: { ...NO_CLOUD, RELAY_VOICE_REPLAY_MAX_FRAMES: '16', RELAY_VOICE_REPLAY_MAX_BYTES: String(64 * 1024) } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  it('a long response, dropped midway: at most 16 frames / 64 KiB come back, the rest follows live, nothing is missing (the stream is paced by the acks)', async () => {
    const s = await create(relay, 'output', bearer(token));
    const v = await opened(relay, s, bearer(token));
    v.send({ type: 'response.create', text: LONG });
    await until(() => v.of('voice.audio.delta').length >= 40);
    await dropped(relay, v, s);
    // Dropped, the session holds its speech once the buffer is half full: waiting changes nothing.
    await sleep(300);
    expect(await v.resume(s.token)).toBe(101);
    await until(() => v.has('voice.response.done') || v.has('voice.error') || v.has('voice.session.resume_failed'), 30_000);
    const replayed = v.frames.filter((f) => f.replayed === true);
    expect(replayed.length).toBeGreaterThan(0);
    expect(replayed.length).toBeLessThanOrEqual(16);
    expect(replayed.reduce((n, f) => n + Buffer.byteLength(JSON.stringify({ ...f, replayed: undefined })), 0)).toBeLessThanOrEqual(64 * 1024);
    const audio = streamOf(v.frames).filter((f) => f.type === 'voice.audio.delta');
    expect(audio.map((f) => f.audio_event_id)).toEqual(audio.map((_, i) => i + 1));
    expect(audio.length).toBeGreaterThan(100);
    expect(streamOf(v.frames).filter((f) => f.type === 'voice.response.done')).toHaveLength(1);
    v.ws.close(1000);
  });

  it('a socket left closing (the client’s close 1001 in, its connection not yet gone) paces the stream as a drop does: the resume has no gap', async () => {
    const s = await create(relay, 'output', bearer(token));
    const v = await opened(relay, s, bearer(token));
    v.send({ type: 'response.create', text: LONG });
    await until(() => v.of('voice.audio.delta').length >= 8);
    // The client stops reading and says "going away"; it never finishes closing, so the relay's socket stays in
    // CLOSING (its close event comes only at ws's 30 s close timeout). Before the fix the speech ran on
    // unpaced there and pushed the frames this client lacks out of the buffer (CI: replay_gap under load).
    (v.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    v.ws.close(1001, 'going away');
    const old = v.ws;
    // Waiting changes nothing: the speech is paused at half the buffer while no open socket takes it.
    await sleep(1_000);
    expect(await v.resume(s.token)).toBe(101);
    await until(() => v.has('voice.response.done') || v.has('voice.error') || v.has('voice.session.resume_failed'), 30_000);
    expect(v.of('voice.session.resume_failed')).toEqual([]);
    const audio = streamOf(v.frames).filter((f) => f.type === 'voice.audio.delta');
    expect(audio.map((f) => f.audio_event_id)).toEqual(audio.map((_, i) => i + 1));
    expect(streamOf(v.frames).filter((f) => f.type === 'voice.response.done')).toHaveLength(1);
    old.terminate();
    v.ws.close(1000);
  });

  it('a client that never acks is not held up by the buffer (its stream runs as before)', async () => {
    const s = await create(relay, 'output', bearer(token));
    const v = await opened(relay, s, bearer(token), false);
    v.send({ type: 'response.create', text: LONG.slice(0, 600) });
    await until(() => v.has('voice.response.done'), 30_000);
    expect(v.of('voice.audio.delta').length).toBeGreaterThan(16);
    v.ws.close(1000);
  });

  it('a position the buffer no longer holds is a gap: resume_failed (replay_gap, 4008) and the session ends', async () => {
    const s = await create(relay, 'output', bearer(token));
    const v = await opened(relay, s, bearer(token), false);
    v.send({ type: 'response.create', text: LONG });
    await until(() => v.of('voice.audio.delta').length >= 40);
    await dropped(relay, v, s);
    v.lastEventId = 2;
    v.lastAudioEventId = 1;
    v.lastPlayedAudioEventId = 1;
    expect(await v.resume(s.token)).toBe(101);
    const r = await refused(v);
    expect(r.frame).toMatchObject({ reason: 'replay_gap', message: expect.stringContaining('16 frames') });
    expect(r.close.code).toBe(4008);
    await until(() => eventsOf(relay, 'voice.session_ended', s.id).length > 0);
    expect(eventsOf(relay, 'voice.session_ended', s.id)[0].data).toMatchObject({ reason: 'resume_failed' });
  });
});

describe('voice resume: the realtime agent', () => {
  let relay: TestRelay;
  let token: string;
  let agent: Awaited<ReturnType<typeof streamingAgent>>;
  beforeAll(async () => {
    agent = await streamingAgent();
    relay = await startRelay({ env: { ...NO_CLOUD, RELAY_WEBAPI_URL: agent.url, RELAY_REALTIME_VOICE_ENABLED: '1' } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(async () => {
    await relay.close();
    await agent.close();
  });

  it('a mic chunk the app sends again after a resume (its chunk_id already taken) is acknowledged, not heard twice', async () => {
    const s = await create(relay, 'realtime-agent', bearer(token));
    const v = await opened(relay, s, bearer(token));
    const chunk = (id: number) => ({
      type: 'input_audio.append',
      chunk_id: id,
      sample_rate: 16000,
      audio_base64: Buffer.alloc(3200, id).toString('base64'),
    });
    v.send(chunk(1));
    v.send(chunk(2));
    await until(() => v.of('voice.input_audio.received').length === 2);
    await dropped(relay, v, s);
    v.lastInputChunkId = 1; // the ack of chunk 2 was lost with the socket, as far as the app knows
    expect(await v.resume(s.token)).toBe(101);
    v.send(chunk(2));
    v.send(chunk(3));
    await until(() => v.of('voice.input_audio.received').length >= 4);
    const acks = v.of('voice.input_audio.received');
    expect(acks[2]).toMatchObject({ input_chunk_id: 2, duplicate: true, total_bytes: 6400 });
    expect(acks[3]).toMatchObject({ input_chunk_id: 3, byte_count: 3200, total_bytes: 9600 });
    expect(v.frames.find((f) => f.type === 'voice.session.resumed')).toMatchObject({ last_input_chunk_id: 2 });
    v.ws.close(1000);
  });
});

describe('voice spelling: svc by default, hermes for the public clients; the agent API keeps its own header', () => {
  it.each([
    ['svc', {}],
    ['hermes', { RELAY_CLIENT_SPELLING: 'hermes' }],
  ] as const)('%s', async (brand, env) => {
    const agent = await streamingAgent();
    const home = tempHome();
    const relay = await startRelay({ home, env: { ...NO_CLOUD, ...env, RELAY_WEBAPI_URL: agent.url, RELAY_REALTIME_VOICE_ENABLED: '1' } });
    try {
      const p = await pairPhone(relay);
      p.phone.close();
      const config = await call(relay, 'GET', '/voice/realtime/config', undefined, bearer(p.token));
      expect(config.body.protocol).toBe(`${brand}.voice.realtime.v0`);
      const options = await call(relay, 'GET', '/voice/realtime-agent/providers/offline/options', undefined, bearer(p.token));
      expect(options.body.protocol).toBe(`${brand}.voice.realtime_agent.options.v0`);
      const validate = await call(relay, 'POST', '/voice/output/providers/offline/validate', { voice: 'en-us' }, bearer(p.token));
      expect(validate.body.protocol).toBe(`${brand}.voice.output.validate.v0`);
      expect((await create(relay, 'output', bearer(p.token))).body.protocol).toBe(`${brand}.voice.output.v0`);
      const s = await create(relay, 'realtime-agent', bearer(p.token), { chat_session_id: 'chat-1' });
      expect(s.body.protocol).toBe(`${brand}.voice.realtime_agent.v0`);
      const v = await opened(relay, s, bearer(p.token));
      expect(v.frames[0].protocol).toBe(`${brand}.voice.realtime_agent.v0`);
      v.send({ type: 'response.create', text: 'weather?' });
      await until(() => v.has('voice.response.done') || v.has('voice.error'));
      const types = v.frames.map((f) => f.type as string);
      const other = brand === 'svc' ? 'hermes' : 'svc';
      for (const t of ['run.started', 'tool.started', 'tool.completed', 'run.progress', 'run.completed']) expect(types).toContain(`${brand}.${t}`);
      expect(types.some((t) => t.startsWith(`${other}.`))).toBe(false);
      expect(v.frames.find((f) => f.type === 'voice.response.delta')).toMatchObject({ source: brand });
      // Both spellings of a client frame are read.
      for (const t of ['hermes.confirm', 'svc.confirm']) v.send({ type: t, confirmation_id: 'c1', answer: 'yes' });
      await until(() => v.of(`${brand}.confirmation.forwarded`).length === 2);
      expect(v.has('voice.error')).toBe(false);
      expect(agent.calls[0]).toMatchObject({ session: 'chat-1' });
      v.ws.close(1000);
    } finally {
      await relay.close();
      await agent.close();
    }
  });
});

describe('voice settings: a phone changes no relay-wide switch, by any path', () => {
  it('a profile without a config file is 404 for a phone (not a fall back to the relay-wide settings); ?profile=default keeps the switch rule', async () => {
    const home = tempHome();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'model: m\n');
    const relay = await startRelay({ home, env: NO_CLOUD });
    try {
      const p = await pairPhone(relay);
      p.phone.close();
      const before = readEvents(relay.home).filter((e) => e.type === 'voice.settings_changed').length;
      const ghost = await call(relay, 'PATCH', '/voice/output/config?profile=ghost', { enabled: false }, bearer(p.token));
      expect(ghost.status).toBe(404);
      expect(ghost.body).toMatchObject({ code: 'voice.profile_not_found' });
      const flip = await call(relay, 'PATCH', '/voice/output/config?profile=default', { enabled: false }, bearer(p.token));
      expect(flip.status).toBe(403);
      expect(flip.body).toMatchObject({ code: 'voice.relay_settings_operator_only', field: 'enabled' });
      expect(readEvents(relay.home).filter((e) => e.type === 'voice.settings_changed')).toHaveLength(before);
      expect((await call(relay, 'GET', '/voice/output/config', undefined, bearer(p.token))).body.enabled).toBe(true);
      // Sending the value in effect is no change: 200, nothing written.
      expect((await call(relay, 'PATCH', '/voice/realtime/config', { enabled: false }, bearer(p.token))).status).toBe(200);
      expect(readEvents(relay.home).filter((e) => e.type === 'voice.settings_changed')).toHaveLength(before);
      // The operator flips it.
      expect((await call(relay, 'PATCH', '/voice/output/config', { enabled: false })).status).toBe(200);
      expect((await call(relay, 'GET', '/voice/output/config', undefined, bearer(p.token))).body.enabled).toBe(false);
    } finally {
      await relay.close();
    }
  });
});
