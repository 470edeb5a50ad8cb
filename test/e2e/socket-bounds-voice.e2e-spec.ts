import WebSocket from 'ws';
import { bearer, pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { AppVoiceSocket, until } from '../support/voice-client';

/**
 * Issue 34, finding 2, on voice sockets: the same bounds as the phone socket (common/sockets/socket-guard.ts). A
 * voice socket the guard closes counts as a lost connection: the session is held for a resume (the app
 * resumes on any close but 1000, RelayVoiceClient.kt 1068-1105), and its drop is recorded with the code
 * the relay sent (`voice.session_detached`).
 */
jest.setTimeout(60_000);

const NO_CLOUD = { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' };

const detached = (relay: TestRelay, id: string) =>
  readEvents(relay.home).filter((e) => e.type === 'voice.session_detached' && e.data.sessionId === id);

async function outputSession(relay: TestRelay, token: string, ack = true): Promise<{ id: string; resumeToken: string; v: AppVoiceSocket }> {
  const r = await call(relay, 'POST', '/voice/output/session', {}, bearer(token));
  expect(r.status).toBe(200);
  const v = new AppVoiceSocket(relay, r.body.websocket_path, bearer(token), ack);
  expect(await v.open()).toBe(101);
  await until(() => v.has('voice.session.ready'));
  return { id: r.body.session_id, resumeToken: r.body.resume_token, v };
}

describe('a voice socket that stops reading', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    // The frame cap off: the output bound alone is under test.
    relay = await startRelay({
      env: { ...NO_CLOUD, RELAY_SOCKET_BUFFER_MB: '0.25', RELAY_SOCKET_FRAMES_PER_SECOND: '1000000', RELAY_SOCKET_FRAME_BURST: '1000000' },
    });
  });
  afterAll(() => relay.close('test done'));

  it('while it floods frames that each earn a voice.error: closed 1013 slow_consumer, the drop recorded with that code, the session held for a resume', async () => {
    const { token } = await pairPhone(relay);
    const { id, resumeToken, v } = await outputSession(relay, token);
    (v.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const frame = JSON.stringify({ type: 'x'.repeat(40) });
    // Each frame is answered with an error of about 200 bytes. Before: the relay held every one unsent.
    for (let sent = 0; sent < 300_000 && detached(relay, id).length === 0; sent += 2000) {
      for (let i = 0; i < 2000; i++) v.ws.send(frame);
      await new Promise((r) => setImmediate(r));
    }
    await until(() => detached(relay, id).length === 1, 20_000, 'the drop');
    expect(detached(relay, id)[0].data).toMatchObject({ code: 1013 });
    expect(relay.logs.some((l) => l.includes('slow_consumer') && l.includes('"socket":"voice"'))).toBe(true);
    v.ws.terminate();
    // Held, as a lost connection is (its errors overflowed the replay buffer, so this one's resume would be told so).
    await until(() => relay.loop.models.voice.session(id)?.detached === true, 10_000, 'the drop, durable');
    expect(readEvents(relay.home).filter((e) => e.type === 'voice.session_ended' && e.data.sessionId === id)).toHaveLength(0);
    expect(resumeToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(relay.logs.join('')).not.toContain(resumeToken);
  });
});

describe('a voice socket that never answers a ping', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ env: NO_CLOUD, config: { pingIntervalMs: 200 } });
  });
  afterAll(() => relay.close('test done'));

  it('is dropped at the ping deadline though it talks (1008 recorded, the session held); one that answers stays', async () => {
    const { token } = await pairPhone(relay);
    const live = await outputSession(relay, token);
    const r = await call(relay, 'POST', '/voice/output/session', {}, bearer(token));
    const ws = new WebSocket(`${relay.url.replace('http', 'ws')}${r.body.websocket_path}`, { headers: bearer(token), autoPong: false });
    await new Promise((res) => ws.once('open', res));
    const closed = new Promise<number>((res) => ws.once('close', res));
    // Talks every 50 ms (the idle close is a minute away): before, nothing pinged a voice socket at all.
    const chatter = setInterval(() => ws.readyState === ws.OPEN && ws.send(JSON.stringify({ type: 'session.start' })), 50);
    try {
      await until(() => detached(relay, r.body.session_id).length === 1, 5_000, 'the ping deadline');
    } finally {
      clearInterval(chatter);
    }
    expect(detached(relay, r.body.session_id)[0].data).toMatchObject({ code: 1008 });
    expect(await closed).toBeGreaterThan(1000);
    // Held for a resume, as a dropped connection is: the app's session.resume takes it back.
    const again = new AppVoiceSocket(relay, r.body.websocket_path, bearer(token));
    expect(await again.resume(r.body.resume_token)).toBe(101);
    await until(() => again.has('voice.session.resumed'), 10_000, 'the resume');
    again.ws.close(1000);
    expect(detached(relay, live.id)).toHaveLength(0);
    live.v.send({ type: 'response.create', text: 'still here' });
    await until(() => live.v.has('voice.response.done'), 15_000, 'the live session’s answer');
    live.v.ws.close(1000);
  });
});
