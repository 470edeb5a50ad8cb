import { pairPhone, readEvents, startRelay, type Phone, type TestRelay } from '../support/harness';
import { call, REMOTE } from '../support/http';

/** The socket's frames are handled in order: a pong means every frame sent before the ping was. */
async function handled(phone: Phone, id: string): Promise<void> {
  phone.send('system', 'ping', { ts: 1 }, id);
  await phone.next((f) => f.id === id, 60_000);
}
const settleWindow = () => new Promise((r) => setTimeout(r, 1300));
const since = (relay: TestRelay, n: number) => readEvents(relay.home).slice(n);

/**
 * A paired phone is a peer like any other: whatever it sends, the log it makes the relay write grows
 * by a bounded amount. Restated state (bridge.status) is coalesced to one event a second per socket;
 * anything else (alternating subscribe/unsubscribe, notification bursts) meets the per-device event
 * budget (300 at once, 5 a second), past which decisions are refused with relay.event_budget. What ends
 * or protects (a revocation, a disconnect) is never refused.
 */
describe('a paired phone cannot flood the event log', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close('test done'));

  it('2,000 bridge.status frames alternating battery and foreground app: about one event a second, the last one recorded; master off is recorded at once', async () => {
    const { phone, prefix } = await pairPhone(relay);
    const status = (i: number, extra: Record<string, unknown> = {}) =>
      phone.send('bridge', 'bridge.status', {
        master_enabled: true,
        device_control_supported: true,
        accessibility_enabled: true,
        screen_on: true,
        battery: i % 2 === 0 ? 40 : 41,
        current_app: i % 2 === 0 ? 'com.example.notes' : 'com.example.mail',
        ...extra,
      });
    const n = readEvents(relay.home).length;
    const t0 = Date.now();
    for (let i = 0; i < 2000; i++) status(i);
    await handled(phone, 'bridge-flood');
    const seconds = (Date.now() - t0) / 1000;
    await settleWindow();
    await relay.loop.drain();
    const reported = since(relay, n).filter((e) => e.type === 'bridge.status_reported');
    expect(reported.length).toBeGreaterThanOrEqual(1);
    expect(reported.length).toBeLessThanOrEqual(Math.ceil(seconds) + 2); // before: 2,000
    expect(relay.loop.models.bridge.device(prefix)).toMatchObject({ battery: 41, currentApp: 'com.example.mail', masterEnabled: true });
    // Switching Device Control off takes effect now, not at the end of the window.
    const before = since(relay, 0).length;
    status(1, { battery: 55 }); // within a new window: waits
    status(1, { master_enabled: false });
    await handled(phone, 'master-off');
    await relay.loop.drain();
    expect(relay.loop.models.bridge.device(prefix)?.masterEnabled).toBe(false);
    expect(since(relay, before).filter((e) => e.type === 'bridge.status_reported').length).toBeLessThanOrEqual(2);
    phone.close();
  });

  it('a subscriber that subscribes again writes nothing; 2,000 alternating subscribe/unsubscribe frames are cut off by the event budget', async () => {
    const { phone, prefix } = await pairPhone(relay);
    const other = await pairPhone(relay);
    const n = readEvents(relay.home).length;
    for (let i = 0; i < 50; i++) phone.send('proactive', 'proactive.subscribe', {}, `s${i}`);
    await handled(phone, 'resubscribed');
    await relay.loop.drain();
    expect(since(relay, n).filter((e) => e.type.startsWith('phone.') && e.type !== 'phone.connected')).toHaveLength(1); // one phone.subscribed
    const m = readEvents(relay.home).length;
    const t0 = Date.now();
    for (let i = 0; i < 1000; i++) {
      phone.send('proactive', 'proactive.unsubscribe', {}, `u${i}`);
      phone.send('proactive', 'proactive.subscribe', {}, `r${i}`);
    }
    await handled(phone, 'alternated');
    const seconds = (Date.now() - t0) / 1000;
    await relay.loop.drain();
    const written = since(relay, m).filter((e) => e.actor === `device:${prefix}`);
    const budgeted = written.filter((e) => e.type === 'phone.subscribed');
    expect(budgeted.length).toBeLessThanOrEqual(300 + Math.ceil(seconds * 5) + 2);
    // An unsubscribe ends what a paid subscribe began, so it is free, and there is at most one per subscribe.
    expect(written.length).toBeLessThanOrEqual(2 * budgeted.length + 1); // before: 2,000 (and a flush record each)
    const refusal = phone.frames.find((f) => f.payload.code === 'relay.event_budget');
    expect(refusal).toMatchObject({ channel: 'proactive', payload: { message: expect.stringContaining('faster'), retry_after: expect.any(Number) } });
    // Another device is not affected; the flooder can still be revoked (and is disconnected).
    other.phone.send('proactive', 'proactive.subscribe', {}, 'other-sub');
    expect((await other.phone.next((f) => f.id === 'other-sub')).type).toBe('proactive.subscribed');
    const rv = await call(relay, 'DELETE', `/sessions/${prefix}`, undefined, { ...REMOTE, authorization: `Bearer ${other.token}` });
    expect(rv).toMatchObject({ status: 200, body: { ok: true } });
    expect(await phone.closed).toBeGreaterThanOrEqual(4000);
    other.phone.close();
  });

  it('1,000 notifications at once: at most the budget is recorded, the rest answered relay.event_budget; HTTP from that device gets 429', async () => {
    const { phone, prefix, token } = await pairPhone(relay);
    const n = readEvents(relay.home).length;
    const t0 = Date.now();
    for (let i = 0; i < 1000; i++)
      phone.send('notifications', 'notification.posted', { package_name: 'com.chat', title: `t${i}`, text: 'x'.repeat(500), key: `k${i}` }, `n${i}`);
    await handled(phone, 'notified');
    const seconds = (Date.now() - t0) / 1000;
    await relay.loop.drain();
    const posted = since(relay, n).filter((e) => e.type === 'notification.posted');
    expect(posted.length).toBeGreaterThanOrEqual(250);
    expect(posted.length).toBeLessThanOrEqual(300 + Math.ceil(seconds * 5) + 2);
    const refused = phone.frames.filter((f) => f.payload.code === 'relay.event_budget');
    expect(refused.length).toBe(1000 - posted.length);
    expect(refused[0]).toMatchObject({ channel: 'notifications', payload: { retry_after: expect.any(Number) } });
    // The same budget on HTTP: a state change from this device is 429 with the code, until it refills.
    const r = await call(relay, 'POST', '/phone/replies', { chat_id: 'c', text: 'hi' }, { ...REMOTE, authorization: `Bearer ${token}` });
    expect(r).toMatchObject({ status: 429, body: { ok: false, code: 'relay.event_budget' } });
    // It refills by the injected clock, 5 a second: a minute later the device may write again.
    relay.clock.advance(60_000);
    const again = await call(relay, 'POST', '/phone/replies', { chat_id: 'c', text: 'hi' }, { ...REMOTE, authorization: `Bearer ${token}` });
    expect(again.status).toBe(200);
    expect(relay.loop.models.notifications.recent(1)[0]).toMatchObject({ tokenPrefix: prefix });
    phone.close();
  });
});
