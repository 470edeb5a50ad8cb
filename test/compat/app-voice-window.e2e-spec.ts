import { bearer, pairPhone, readEvents, type TestRelay } from '../support/harness';
import { call, type Json } from '../support/http';
import { AppVoiceSocket, streamingAgent, until } from '../support/voice-client';
import { startRelay } from './client-relay';

/**
 * The app's route-loss retry worker against the relay's resume grace (RVC = Codename-11/hermes-relay
 * app/src/main/kotlin/com/hermesandroid/relay/network/relay/RelayVoiceClient.kt):
 * - REALTIME_RESUME_RETRY_INTERVAL_MS = 10_000 and REALTIME_RESUME_RETRY_WINDOW_MS = 5 * 60_000 (RVC:127-128):
 *   a fixed 10 s interval, no backoff;
 * - the window starts when the route is lost, not when the session was made (markResumeWaiting sets the
 *   deadline to now + the window once per loss episode, RVC:1368-1388; a confirmed `voice.session.resumed`
 *   clears it, RVC:1402-1405);
 * - the worker wakes every 10 s, and while now < deadline sends a `session.resume` (RVC:2331-2372); once the
 *   deadline has passed it gives up ("could not restore the voice route", RVC:2359-2363). So the last try
 *   comes just under 5 minutes after the loss: the relay must hold the session that long;
 * - a `voice.session.resume_failed` frame ends the turn at once with its `message` (RVC:1906-1918, the
 *   realtime agent; RVC:1020-1022, voice output), read as parseRealtimeEvent reads it (`message`, else
 *   `error`, else `reason`, RVC:2974-2980); a failed upgrade would instead be retried until the deadline.
 */
jest.setTimeout(60_000);

/** parseRealtimeEvent's message (RVC:2977-2980). */
const appMessage = (f: Json): string | undefined => f.message ?? f.error ?? f.reason;

describe("compat: a dropped voice session is held for the app's 5-minute route-loss window", () => {
  let relay: TestRelay;
  let token: string;
  let agent: Awaited<ReturnType<typeof streamingAgent>>;
  beforeAll(async () => {
    agent = await streamingAgent();
    relay = await startRelay({
      env: {
        VOICE_TOOLS_OPENAI_KEY: '',
        OPENAI_API_KEY: '',
        RELAY_WEBAPI_URL: agent.url,
        RELAY_REALTIME_VOICE_ENABLED: '1',
        API_SERVER_KEY: 'k'.repeat(32),
      },
    });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(async () => {
    await relay.close();
    await agent.close();
  });

  /** A realtime agent session (the surface with the retry worker), its socket open, then the route lost (1006). */
  async function heldSession(): Promise<{ v: AppVoiceSocket; id: string; resumeToken: string; body: Json }> {
    const created = await call(relay, 'POST', '/voice/realtime-agent/session', { chat_session_id: 'chat-1' }, bearer(token));
    expect(created.status).toBe(200);
    const id = created.body.session_id as string;
    const v = new AppVoiceSocket(relay, created.body.websocket_path as string, bearer(token));
    expect(await v.open((ws) => ws.send('{"type":"session.start"}'))).toBe(101);
    await until(() => v.has('voice.session.ready'));
    await v.drop();
    await until(() => relay.loop.models.voice.session(id)?.detached === true, 10_000, 'the drop, durable');
    return { v, id, resumeToken: created.body.resume_token as string, body: created.body };
  }

  const ended = (id: string) => readEvents(relay.home).filter((e) => e.type === 'voice.session_ended' && e.data.sessionId === id);

  it('a resume at 4 min 50 s on the relay clock (the worker’s last tries) takes the session back, and the turn runs on it', async () => {
    const s = await heldSession();
    expect(s.body.resume_ttl_ms).toBe(300_000);
    const detached = readEvents(relay.home).find((e) => e.type === 'voice.session_detached' && e.data.sessionId === s.id)!;
    expect(Date.parse(detached.data.resumeUntil as string) - relay.clock.now().getTime()).toBe(300_000);
    relay.clock.advance(290_000);
    await relay.sweep();
    expect(ended(s.id)).toHaveLength(0);
    expect(await s.v.resume(s.resumeToken)).toBe(101);
    await until(() => s.v.has('voice.session.resumed') || s.v.has('voice.session.resume_failed'));
    expect(s.v.has('voice.session.resume_failed')).toBe(false);
    s.v.send({ type: 'response.create', tool_scaffold: false, text: 'still there?', render_mode: 'verbatim' });
    await until(() => s.v.has('voice.response.done') || s.v.has('voice.error'), 30_000, 'the answer');
    expect(s.v.has('voice.error')).toBe(false);
    s.v.ws.close(1000, 'done');
  });

  it('at 5 min 1 s it is gone: ended resume_expired, and the late resume gets voice.session.resume_failed (terminal for the app) then 4008', async () => {
    const s = await heldSession();
    relay.clock.advance(301_000);
    await relay.sweep();
    await until(() => ended(s.id).length > 0, 10_000, 'the end');
    expect(ended(s.id)[0].data).toMatchObject({ reason: 'resume_expired' });
    expect(await s.v.resume(s.resumeToken)).toBe(101);
    const close = await s.v.closed;
    const failed = s.v.of('voice.session.resume_failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ session_id: s.id, reason: 'resume_expired' });
    expect(appMessage(failed[0])).toMatch(/^this voice session has ended/);
    expect(close.code).toBe(4008);
  });
});
