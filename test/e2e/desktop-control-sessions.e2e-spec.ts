import { pairPhone, readEvents, startRelay, type Frame, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { CLI_TOOLS, FakeDesktop } from '../support/desktop';
import { until } from '../support/voice-client';

/**
 * Computer-use control sessions (issue 22.6): the host's desktop tool names its requester context in
 * `X-<brand>-Relay-Chat-Session`, `-Run-Id`, `-Profile`; the relay binds each run to one target desktop
 * under an id it owns, sends it as `control_session` with every `desktop_computer_*` call, and tells the
 * client `desktop.control_session_end` when the run changes, goes idle or is evicted (the desktop CLI's
 * router.ts accepts computer use only under a valid binding, and drops its authority on the end frame).
 */
jest.setTimeout(30_000);

const TOOLS = [...CLI_TOOLS, 'desktop_computer_status', 'desktop_computer_action'];

async function withDesktop(env: Record<string, string> = {}) {
  const relay = await startRelay({ env, config: { desktop: { defaultMs: 2000, computerUseMs: 2000, adbMs: 2000 } } });
  const d = await FakeDesktop.pair(relay, { deviceId: 'desk-7f3a' });
  const frames: Frame[] = [];
  d.phone.ws.on('message', (data) => {
    const f = JSON.parse(data.toString()) as Frame;
    if (f.channel === 'desktop') frames.push(f);
  });
  d.status(TOOLS);
  await until(() => relay.loop.models.desktop.targets().length === 1, 15_000, 'the desktop status');
  return { relay, d, frames };
}

const headers = (run: string, extra: Record<string, string> = {}) => ({
  'x-svc-relay-chat-session': 'chat-42',
  'x-svc-relay-run-id': run,
  'x-svc-relay-profile': 'work',
  ...extra,
});
const commands = (frames: Frame[]) => frames.filter((f) => f.type === 'desktop.command').map((f) => f.payload);
const ends = (frames: Frame[]) => frames.filter((f) => f.type === 'desktop.control_session_end').map((f) => f.payload);

describe('desktop computer-use control sessions', () => {
  let relay: TestRelay;
  afterEach(async () => relay?.close());

  it('binds a run to the target under one relay-owned id; a new run ends the old one on the client', async () => {
    const w = await withDesktop();
    relay = w.relay;
    const a = await call(relay, 'POST', '/desktop/desktop_computer_status', {}, headers('run-1'));
    expect(a.status).toBe(200);
    await call(relay, 'POST', '/desktop/desktop_computer_action', { action: 'click' }, headers('run-1'));
    const [c1, c2] = commands(w.frames);
    expect(c1.control_session).toEqual({
      version: 1,
      id: expect.stringMatching(/^control-[0-9a-f-]{36}$/),
      request_id: c1.request_id,
      requester_device_id: 'svc-agent:chat-42',
      target_device_id: 'desk-7f3a',
      run_id: 'run-1',
      chat_session_id: 'chat-42',
      profile: 'work',
    });
    const id = (c1.control_session as { id: string }).id;
    expect(c2.control_session).toMatchObject({ id, request_id: c2.request_id });

    await call(relay, 'POST', '/desktop/desktop_computer_status', {}, headers('run-2'));
    await until(() => ends(w.frames).length > 0 && commands(w.frames).length > 2, 15_000, 'the end and the third command');
    expect(ends(w.frames)).toEqual([{ version: 1, id, target_device_id: 'desk-7f3a', reason: 'requester run changed' }]);
    const c3 = commands(w.frames)[2];
    expect((c3.control_session as { id: string }).id).not.toBe(id);
    await relay.loop.drain();
    const ev = readEvents(relay.home);
    expect(ev.filter((e) => e.type === 'desktop.control_session_started')).toHaveLength(2);
    expect(ev.find((e) => e.type === 'desktop.control_session_ended')!.data).toMatchObject({ controlId: id, reason: 'run_changed' });
    expect(ev.filter((e) => e.type === 'desktop.command_sent').map((e) => e.data.controlId)).toEqual([
      id,
      id,
      (c3.control_session as { id: string }).id,
    ]);
    w.d.phone.close();
  });

  it('ends a session idle for 15 minutes (clock-driven sweep) and never binds other tools or calls without a run', async () => {
    const w = await withDesktop();
    relay = w.relay;
    await call(relay, 'POST', '/desktop/desktop_computer_status', {}, headers('run-1'));
    await call(relay, 'POST', '/desktop/desktop_read_file', { path: '/tmp/x' }, headers('run-1'));
    await call(relay, 'POST', '/desktop/desktop_computer_status', {}, { 'x-svc-relay-chat-session': 'chat-42' });
    const [cu, read, noRun] = commands(w.frames);
    expect(cu.control_session).toBeDefined();
    expect(read).not.toHaveProperty('control_session');
    expect(noRun).not.toHaveProperty('control_session');
    relay.clock.advance(14 * 60 * 1000);
    await relay.sweep();
    expect(ends(w.frames)).toEqual([]);
    relay.clock.advance(60 * 1000);
    await relay.sweep();
    await until(() => ends(w.frames).length > 0, 15_000, 'the idle end');
    expect(ends(w.frames)).toEqual([
      expect.objectContaining({ id: (cu.control_session as { id: string }).id, reason: 'control session idle timeout' }),
    ]);
    w.d.phone.close();
  });

  it('a paired caller is the requester itself; hermes spelling names the agent requester and reads X-Hermes-Relay-*', async () => {
    const w = await withDesktop({ RELAY_CLIENT_SPELLING: 'hermes' });
    relay = w.relay;
    await call(relay, 'POST', '/desktop/desktop_computer_status', {}, { 'x-hermes-relay-chat-session': 's1', 'x-hermes-relay-run-id': 'r1' });
    expect(commands(w.frames)[0].control_session).toMatchObject({ requester_device_id: 'hermes-agent:s1', run_id: 'r1', chat_session_id: 's1' });
    const phone = await pairPhone(relay, { terms: { grants: { desktop: '1d' } }, device: { device_id: 'phone-9' } });
    const r = await call(
      relay,
      'POST',
      '/desktop/desktop_computer_status',
      {},
      { authorization: `Bearer ${phone.token}`, 'x-hermes-relay-run-id': 'r2' },
    );
    expect(r.status).toBe(200);
    expect(commands(w.frames)[1].control_session).toMatchObject({ requester_device_id: 'phone-9', run_id: 'r2' });
    expect(commands(w.frames)[1].control_session).not.toHaveProperty('chat_session_id');
    phone.phone.close();
    w.d.phone.close();
  });

  it('hostile headers are cut and cleaned; the session dies with its target socket', async () => {
    const w = await withDesktop();
    relay = w.relay;
    await call(relay, 'POST', '/desktop/desktop_computer_status', {}, headers(`run-\t${'x'.repeat(5000)}`));
    const c = commands(w.frames)[0].control_session as { run_id: string };
    expect(c.run_id).toHaveLength(256);
    expect(c.run_id).not.toContain('\t');
    expect(relay.loop.models.desktop.controlSessions()).toHaveLength(1);
    w.d.phone.close();
    await until(() => relay.loop.models.desktop.controlSessions().length === 0, 15_000, 'the session gone with its socket');
  });
});
