import { bearer, pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { call, type Json } from '../support/http';
import { AppVoiceSocket, until } from '../support/voice-client';

/**
 * Sessions held for a resume are bounded together (issue 35.4): each holds at most its replay buffer
 * (RELAY_VOICE_REPLAY_MAX_BYTES), and all of them together at most RELAY_VOICE_HELD_MAX_BYTES; past it the
 * session held longest ends (`resume_evicted`), so phones holding sessions for five minutes each cannot
 * grow the relay's memory without bound. The console says how long each held session has left and what
 * it holds.
 */
jest.setTimeout(60_000);

const KIB = 1024;
const LONG = 'A long answer that keeps the speech engine busy for a while. '.repeat(40);

describe('held voice sessions: one memory bound for all of them', () => {
  let relay: TestRelay;
  let token: string;
  beforeAll(async () => {
    relay = await startRelay({
      env: {
        VOICE_TOOLS_OPENAI_KEY: '',
        OPENAI_API_KEY: '',
        RELAY_VOICE_REPLAY_MAX_BYTES: String(256 * KIB),
        RELAY_VOICE_HELD_MAX_BYTES: String(300 * KIB),
      },
    });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  const ended = (id: string) => readEvents(relay.home).filter((e) => e.type === 'voice.session_ended' && e.data.sessionId === id);
  const consoleVoice = async () => (await call(relay, 'GET', '/console/api/voice')).body;
  const row = (v: Json, id: string) => (v.open_sessions as Json[]).find((s) => s.session_id === id);

  /**
   * A session dropped mid-answer: held, the speech paused, its buffer full. A client that never acks fills
   * the replay buffer to its bound while it streams (and may resume with a gap: what the relay sent past
   * the bound before it saw the drop is not held for it); one that acks as the app does is never further
   * behind than half the buffer, which is what it holds once dropped, and resumes without a gap.
   */
  async function heldFull(acks: boolean): Promise<{ id: string; v: AppVoiceSocket; resumeToken: string }> {
    const created = await call(relay, 'POST', '/voice/output/session', {}, bearer(token));
    expect(created.status).toBe(200);
    const id = created.body.session_id as string;
    const v = new AppVoiceSocket(relay, created.body.websocket_path as string, bearer(token), acks);
    expect(await v.open()).toBe(101);
    v.send({ type: 'response.create', text: LONG });
    await until(() => v.of('voice.audio.delta').length >= 60, 30_000, 'audio past the replay bound');
    await v.drop();
    await until(() => relay.loop.models.voice.session(id)?.detached === true, 10_000, 'the drop, durable');
    return { id, v, resumeToken: created.body.resume_token as string };
  }

  it('the console shows each held session with its time left and bytes; past the total the one held longest ends resume_evicted', async () => {
    const a = await heldFull(false);
    let view = await consoleVoice();
    expect(view.held).toEqual({ sessions: 1, bytes: expect.any(Number), max_bytes: 300 * KIB, grace_seconds: 300 });
    const ra = row(view, a.id)!;
    expect(ra).toMatchObject({ state: 'held', expires_at: view.server_time + 300 });
    expect(ra.held_bytes).toBeGreaterThan(200 * KIB);
    expect(ra.held_bytes).toBeLessThanOrEqual(256 * KIB);
    expect(view.held.bytes).toBe(ra.held_bytes);

    relay.clock.advance(60_000);
    const b = await heldFull(true);
    await until(() => ended(a.id).length > 0, 10_000, 'the eviction');
    expect(ended(a.id)[0].data).toMatchObject({ reason: 'resume_evicted' });
    // The file holds a record before the read models apply it (written, synced, then applied): wait for them,
    // or a busy machine answers the console from the model of a moment before (seen under load).
    const evictedSeq = ended(a.id)[0].seq;
    await until(() => relay.loop.models.lastSeq >= evictedSeq, 10_000, 'the eviction applied');
    view = await consoleVoice();
    expect(row(view, a.id)).toBeUndefined();
    expect(row(view, b.id)).toMatchObject({ state: 'held', expires_at: view.server_time + 300 });
    expect(view.held.sessions).toBe(1);
    expect(view.held.bytes).toBeLessThanOrEqual(300 * KIB);
    expect((view.ended_sessions as Json[]).find((s) => s.session_id === a.id)).toMatchObject({ reason: 'resume_evicted' });

    // The evicted session's late resume is told it is gone (terminal for the app); the one still held resumes.
    expect(await a.v.resume(a.resumeToken)).toBe(101);
    expect((await a.v.closed).code).toBe(4008);
    expect(a.v.of('voice.session.resume_failed')[0]).toMatchObject({
      reason: 'resume_expired',
      message: expect.stringMatching(/RELAY_VOICE_HELD_MAX_BYTES/),
    });
    expect(await b.v.resume(b.resumeToken)).toBe(101);
    await until(() => b.v.has('voice.session.resumed') || b.v.has('voice.session.resume_failed'), 30_000, 'the resume answered');
    expect(b.v.of('voice.session.resume_failed')).toEqual([]);
    view = await consoleVoice();
    expect(view.held).toMatchObject({ sessions: 0, bytes: 0 });
    expect(row(view, b.id)).toMatchObject({ state: 'connected', held_bytes: null });
    b.v.ws.close(1000);
  });
});
