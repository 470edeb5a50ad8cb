import { ReadModels } from '@svc/domain';
import { eventsDir, replayLog } from '@svc/events';
import { bearer, pairPhone, readEvents, startRelay, type Phone, type TestRelay } from '../support/harness';
import { dc, op, startSim, until } from '../support/bridge';
import type { PhoneSim, SimCommand } from '../../apps/phone-sim/src/phone-sim';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** Which phone a call reaches, and every way a call can fail on the way there and back. */
describe('Device Control routing, correlation and failures', () => {
  let relay: TestRelay;
  let host: { phone: Phone; token: string; prefix: string };
  const sims: PhoneSim[] = [];
  beforeAll(async () => {
    relay = await startRelay({ env: { RELAY_BRIDGE_COMMAND_TIMEOUT_MS: '1500' } });
    // The host tool's bearer (MOBILE_BRIDGE_TOKEN): a paired session with the bridge grant, not itself a bridge device.
    host = await pairPhone(relay, { device: { device_name: 'Host tools', device_id: 'host-tools' } });
  });
  afterAll(async () => {
    for (const s of sims) s.stop();
    host.phone.close();
    await relay.close();
  });
  const sim = async (o: Parameters<typeof startSim>[1] = {}) => {
    const s = await startSim(relay, o);
    sims.push(s);
    return s;
  };
  const failures = () => readEvents(relay.home).filter((e) => e.type === 'bridge.command_failed');

  it('no phone on the bridge: 503', async () => {
    const r = await dc(relay, host.token, 'GET', '/ping');
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ ok: false, code: 'bridge.no_device' });
  });

  it('device selectors: id, token prefix or name; ambiguous 409; unknown 404; paired but offline 503', async () => {
    const a = await sim({ deviceName: 'Twin', deviceId: 'pixel-a' });
    const b = await sim({ deviceName: 'Twin', deviceId: 'pixel-b' });
    const none = await dc(relay, host.token, 'GET', '/ping');
    expect(none.status).toBe(409);
    expect(none.body).toMatchObject({ code: 'bridge.device_ambiguous', matches: 2 });
    const last = (s: PhoneSim) => s.received.filter((f) => f.type === 'bridge.command').length;
    expect((await dc(relay, host.token, 'GET', '/ping?device=pixel-a')).status).toBe(200);
    expect((await dc(relay, host.token, 'GET', `/ping?device_id=${b.tokenPrefix}`)).status).toBe(200);
    expect((await dc(relay, host.token, 'POST', '/tap', { x: 1, y: 1, device: 'pixel-b' })).status).toBe(200);
    expect([last(a), last(b)]).toEqual([1, 2]);
    expect((await dc(relay, host.token, 'GET', '/ping?device=Twin')).status).toBe(409);
    const unknown = await dc(relay, host.token, 'GET', '/ping?device=nokia-3310');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('bridge.device_not_found');
    const offline = await dc(relay, host.token, 'GET', '/ping?device=host-tools');
    expect(offline.status).toBe(503);
    expect(offline.body.code).toBe('bridge.device_offline');
    // a phone's own bearer reaches its own phone without a selector
    expect((await dc(relay, a.token!, 'GET', '/ping')).status).toBe(200);
    expect(last(a)).toBe(2);
  });

  it('POST /bridge/select-active picks the phone for calls without a selector (loopback only)', async () => {
    const [, b] = sims;
    const r = await op(relay, 'POST', '/bridge/select-active', { device: 'pixel-b' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, active: b.tokenPrefix, device: { device_id: 'pixel-b', active: true } });
    const before = b.received.length;
    expect((await dc(relay, host.token, 'GET', '/ping')).status).toBe(200);
    expect(b.received.length).toBe(before + 1);
    expect((await op(relay, 'POST', '/bridge/select-active', { device: 'nobody' })).status).toBe(404);
    expect((await op(relay, 'POST', '/bridge/select-active', {})).status).toBe(400);
    const proxied = await fetch(`${relay.url}/bridge/status`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(proxied.status).toBe(403);
    const bearerOnly = await fetch(`${relay.url}/bridge/devices`, { headers: { ...bearer(host.token), 'x-real-ip': '203.0.113.9' } });
    expect(bearerOnly.status).toBe(403);
    const devices = await op(relay, 'GET', '/bridge/devices');
    expect(devices.body).toMatchObject({ ok: true, active: b.tokenPrefix });
    expect(devices.body.devices).toHaveLength(2);
    expect(devices.body.devices[0]).toEqual(
      expect.objectContaining({
        token_prefix: expect.any(String),
        device_name: 'Twin',
        online: true,
        master_enabled: true,
        device_control_supported: true,
        battery: 87,
      }),
    );
    const status = await op(relay, 'GET', '/bridge/status');
    expect(status.body).toMatchObject({
      ok: true,
      device: { device_id: 'pixel-b' },
      bridge: { connected: true, devices: 2, active: b.tokenPrefix },
      safety: { master_enabled: true },
    });
    expect(readEvents(relay.home).filter((e) => e.type === 'bridge.active_selected')).toEqual([
      expect.objectContaining({ actor: 'operator', data: { tokenPrefix: b.tokenPrefix, deviceId: 'pixel-b', by: 'operator' } }),
    ]);
  });

  it('a silent phone: 504 after the command timeout; its late answer is ignored', async () => {
    const [, b] = sims;
    let seen: SimCommand | null = null;
    b.handlers['/screen'] = (cmd) => ((seen = cmd), null);
    const t = Date.now();
    const r = await dc(relay, host.token, 'GET', '/screen');
    expect(r.status).toBe(504);
    expect(r.body).toMatchObject({ ok: false, code: 'bridge.timeout' });
    expect(Date.now() - t).toBeGreaterThanOrEqual(1400);
    expect(failures().pop()!.data).toMatchObject({ path: '/screen', reason: 'timeout', requestId: seen!.request_id });
    b.send('bridge', 'bridge.response', { request_id: seen!.request_id, status: 200, result: { late: true } });
    await new Promise((res) => setTimeout(res, 50));
    expect(readEvents(relay.home).some((e) => e.type === 'bridge.command_answered' && e.data.requestId === seen!.request_id)).toBe(false);
    delete b.handlers['/screen'];
  });

  it('a response from another socket is ignored; the right socket still answers', async () => {
    const [a, b] = sims;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let cmd!: SimCommand;
    b.handlers['/screen_hash'] = async (c) => {
      cmd = c;
      await gate;
      return { status: 200, result: { hash: 'from-b' } };
    };
    const call = dc(relay, host.token, 'GET', '/screen_hash');
    await until(() => cmd !== undefined);
    a.send('bridge', 'bridge.response', { request_id: cmd.request_id, status: 200, result: { hash: 'forged-by-a' } });
    await new Promise((res) => setTimeout(res, 50));
    release();
    const r = await call;
    expect(r.body).toEqual({ hash: 'from-b' });
    delete b.handlers['/screen_hash'];
  });

  it('a non-object result is wrapped as {value}, an invalid status is a 502', async () => {
    const [, b] = sims;
    b.handlers['/location'] = () => ({ status: 200, result: 'somewhere' });
    expect((await dc(relay, host.token, 'GET', '/location')).body).toEqual({ value: 'somewhere' });
    b.handlers['/location'] = () => ({ status: 1234, result: {} });
    const bad = await dc(relay, host.token, 'GET', '/location');
    expect(bad.status).toBe(502);
    expect(failures().pop()!.data.reason).toBe('bad_response');
    delete b.handlers['/location'];
  });

  it('many commands in flight at once, answered out of order, each to its own caller', async () => {
    const [, b] = sims;
    b.handlers['/tap'] = async (c) => {
      await new Promise((r) => setTimeout(r, Math.random() * 30));
      return { status: 200, result: { x: c.body.x } };
    };
    const results = await Promise.all(Array.from({ length: 64 }, (_, i) => dc(relay, host.token, 'POST', '/tap', { x: i, y: 1 })));
    expect(results.map((r) => r.body.x)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    delete b.handlers['/tap'];
  });

  it('the phone leaves mid-request: 502', async () => {
    const c = await sim({ deviceId: 'leaver' });
    c.handlers['/screen'] = (_cmd, s) => (s.stop(), null);
    const r = await dc(relay, host.token, 'GET', '/screen?device=leaver');
    expect(r.status).toBe(502);
    expect(r.body).toMatchObject({ ok: false, code: 'bridge.phone_gone', error: 'the phone disconnected before answering' });
    expect(failures().pop()!.data).toMatchObject({ reason: 'phone_gone', tokenPrefix: c.tokenPrefix });
    await until(() => !relay.loop.models.bridge.device(c.tokenPrefix!));
    expect((await dc(relay, host.token, 'GET', '/ping?device=leaver')).status).toBe(503);
  });

  it("a revoked session's in-flight commands fail cleanly (502, recorded as session_revoked)", async () => {
    const d = await sim({ deviceId: 'revoked-one', confirm: 'ignore' });
    d.handlers['/screen'] = () => null;
    const inflight = dc(relay, host.token, 'GET', '/screen?device=revoked-one');
    const confirming = dc(relay, host.token, 'POST', '/tap_text?device=revoked-one', { text: 'Delete' });
    await d.nextReceived('bridge.confirm');
    await until(() => d.received.some((f) => f.type === 'bridge.command'));
    const del = await fetch(`${relay.url}/sessions/${d.tokenPrefix}`, { method: 'DELETE', headers: bearer(host.token) });
    expect(del.status).toBe(200);
    const [r1, r2] = await Promise.all([inflight, confirming]);
    expect(r1.status).toBe(502);
    expect(r1.body.error).toMatch(/revoked/);
    expect(r2.status).toBe(502);
    expect(failures().pop()!.data).toMatchObject({ reason: 'session_revoked', tokenPrefix: d.tokenPrefix });
    const cancelled = readEvents(relay.home).filter((e) => e.type === 'bridge.safety_decided' && e.data.decision === 'confirmation_cancelled');
    expect(cancelled).toHaveLength(1);
    expect(relay.loop.models.bridge.device(d.tokenPrefix!)).toBeUndefined();
    expect(relay.loop.models.bridge.pendingConfirmations()).toHaveLength(0);
  });

  it('bridge.status: malformed fields are refused; an unchanged report writes nothing', async () => {
    const [, b] = sims;
    const count = () => readEvents(relay.home).filter((e) => e.type === 'bridge.status_reported' && e.data.tokenPrefix === b.tokenPrefix).length;
    const n = count();
    b.reportStatus();
    b.reportStatus();
    await new Promise((r) => setTimeout(r, 50));
    expect(count()).toBe(n);
    b.reportStatus({ battery: 55 });
    await until(() => relay.loop.models.bridge.device(b.tokenPrefix!)?.battery === 55);
    expect(count()).toBe(n + 1);
    const bad = await pairPhone(relay);
    bad.phone.send('bridge', 'bridge.status', { master_enabled: 'yes' });
    expect((await bad.phone.type('bridge', 'bridge.error')).payload).toMatchObject({
      code: 'bad_frame',
      message: expect.stringContaining('master_enabled'),
    });
    bad.phone.send('bridge', 'bridge.response', { request_id: 'nothing-in-flight', status: 200 });
    bad.phone.send('bridge', 'bridge.bogus', {});
    expect((await bad.phone.type('bridge', 'bridge.error')).payload).toMatchObject({ code: 'unknown_type' });
    bad.phone.close();
  });

  it('replaying the log yields the same bridge read model; a restart empties the devices and keeps the history', async () => {
    const replayed = new ReadModels();
    await relay.loop.drain();
    replayLog(eventsDir(relay.home), replayed);
    expect(replayed.bridge.snapshot()).toEqual(relay.loop.models.bridge.snapshot());
    const activityBefore = relay.loop.models.bridge.activity().length;
    for (const s of sims) s.stop();
    host.phone.close();
    relay = await relay.restart();
    expect(relay.loop.models.bridge.allDevices()).toEqual([]);
    expect(relay.loop.models.bridge.activity().length).toBe(activityBefore);
    expect(relay.loop.models.bridge.inFlight()).toBe(0);
    host = await pairPhone(relay);
  });
});
