import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { dc, op, startSim, until } from '../support/bridge';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/** Every branch of the safety pipeline, each with the event it wrote. */
describe('Device Control safety pipeline', () => {
  let relay: TestRelay;
  const sims: PhoneSim[] = [];
  beforeAll(async () => {
    relay = await startRelay({ env: { RELAY_BRIDGE_BLOCKLIST: 'com.example.bank.*,org.example.vault' } });
  });
  afterAll(async () => {
    for (const s of sims) s.stop();
    await relay.close();
  });
  const sim = async (o: Parameters<typeof startSim>[1] = {}) => {
    const s = await startSim(relay, o);
    sims.push(s);
    return s;
  };
  const decisions = (s: PhoneSim) =>
    readEvents(relay.home)
      .filter((e) => e.type === 'bridge.safety_decided' && e.data.tokenPrefix === s.tokenPrefix)
      .map((e) => e.data);
  const sent = (s: PhoneSim) => readEvents(relay.home).filter((e) => e.type === 'bridge.command_sent' && e.data.tokenPrefix === s.tokenPrefix);
  const commands = (s: PhoneSim) => s.received.filter((f) => f.type === 'bridge.command').map((f) => f.payload.path);

  it('master toggle off: 403 for everything but /ping, /current_app, /return_to_svc', async () => {
    const s = await sim({ masterEnabled: false });
    const r = await dc(relay, s.token!, 'POST', '/tap', { x: 1, y: 1 });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ ok: false, code: 'bridge.master_disabled', error: 'Device Control is switched off on the phone' });
    expect((await dc(relay, s.token!, 'GET', '/screen')).status).toBe(403);
    expect((await dc(relay, s.token!, 'GET', '/ping')).status).toBe(200);
    expect((await dc(relay, s.token!, 'GET', '/current_app')).status).toBe(200);
    expect((await dc(relay, s.token!, 'POST', '/return_to_hermes', {})).status).toBe(200);
    expect(commands(s)).toEqual(['/ping', '/current_app', '/return_to_svc']);
    const d = decisions(s).map((x) => x.decision);
    expect(d).toEqual(['master_off', 'master_off', 'exempt', 'exempt', 'exempt']);
    expect(decisions(s)[0]).toMatchObject({ path: '/tap', method: 'POST', reason: expect.stringContaining('master toggle') });
  });

  it('a build without device control: 403 error_code device_control_sideload_only', async () => {
    const s = await sim({ deviceControlSupported: false });
    const r = await dc(relay, s.token!, 'GET', '/ping');
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ ok: false, error_code: 'device_control_sideload_only' });
    expect(decisions(s).map((x) => x.decision)).toEqual(['sideload_only']);
    expect(commands(s)).toEqual([]);
  });

  it('blocklisted target package (default list and config extension): 403 blocked package <name>', async () => {
    const s = await sim();
    for (const pkg of ['com.chase.sig.android', 'com.example.bank.mobile', 'org.example.vault']) {
      const r = await dc(relay, s.token!, 'POST', '/open_app', { package: pkg });
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ ok: false, error: `blocked package ${pkg}`, code: 'bridge.blocked_package', package: pkg });
    }
    const intent = await dc(relay, s.token!, 'POST', '/send_intent', {
      action: 'android.intent.action.MAIN',
      component: 'com.paypal.android.p2pmobile/.Main',
    });
    expect(intent.body).toMatchObject({ error: 'blocked package com.paypal.android.p2pmobile' });
    expect((await dc(relay, s.token!, 'POST', '/open_app', { package: 'com.android.chrome' })).status).toBe(200);
    expect(commands(s)).toEqual(['/open_app']);
    expect(
      decisions(s)
        .filter((x) => x.decision === 'blocked_package')
        .map((x) => x.package),
    ).toEqual(['com.chase.sig.android', 'com.example.bank.mobile', 'org.example.vault', 'com.paypal.android.p2pmobile']);
  });

  it('blocklisted foreground app: screen reads and acts refused, leaving it is allowed', async () => {
    const s = await sim();
    s.reportStatus({ currentApp: 'com.x8bit.bitwarden' });
    await until(() => relay.loop.models.bridge.device(s.tokenPrefix!)?.currentApp === 'com.x8bit.bitwarden');
    for (const [m, p, b] of [
      ['GET', '/screen'],
      ['POST', '/tap', { x: 5, y: 5 }],
      ['GET', '/clipboard'],
      ['POST', '/type', { text: 'x' }],
    ] as const) {
      const r = await dc(relay, s.token!, m, p, b);
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('blocked package com.x8bit.bitwarden');
    }
    expect((await dc(relay, s.token!, 'POST', '/press_key', { key: 'home' })).status).toBe(200);
    await until(() => relay.loop.models.bridge.device(s.tokenPrefix!)?.currentApp === 'com.android.launcher3');
    expect((await dc(relay, s.token!, 'GET', '/screen')).status).toBe(200);
    expect(decisions(s).filter((x) => x.decision === 'blocked_package')[0].reason).toContain('foreground app com.x8bit.bitwarden');
  });

  it('a foreground app the phone did not report but an answer showed (/current_app, /screen) is what the blocklist checks', async () => {
    const s = await sim();
    // The user switched to a password manager; this phone sent no bridge.status about it.
    s.state.currentApp = 'com.x8bit.bitwarden';
    expect(relay.loop.models.bridge.device(s.tokenPrefix!)?.currentApp).toBe('com.android.launcher3');
    const seen = await dc(relay, s.token!, 'GET', '/current_app');
    expect(seen).toMatchObject({ status: 200, body: { package: 'com.x8bit.bitwarden' } });
    expect(relay.loop.models.bridge.device(s.tokenPrefix!)?.currentApp).toBe('com.x8bit.bitwarden');
    const before = commands(s).length;
    const r = await dc(relay, s.token!, 'POST', '/tap', { x: 5, y: 5 });
    expect(r).toMatchObject({ status: 403, body: { error: 'blocked package com.x8bit.bitwarden' } });
    expect(commands(s).length).toBe(before); // the tap never reached the phone
    const answered = readEvents(relay.home).filter((e) => e.type === 'bridge.command_answered' && e.data.tokenPrefix === s.tokenPrefix);
    expect(answered.at(-1)!.data).toMatchObject({ path: '/current_app', status: 200, currentApp: 'com.x8bit.bitwarden' });
    // Back on the launcher (again unreported): until an answer shows it, the relay keeps refusing.
    s.state.currentApp = 'com.android.launcher3';
    expect((await dc(relay, s.token!, 'POST', '/tap', { x: 5, y: 5 })).status).toBe(403);
    // /current_app is no foreground action, so it passes the gate and shows where the phone is now.
    expect((await dc(relay, s.token!, 'GET', '/current_app')).body).toMatchObject({ package: 'com.android.launcher3' });
    expect((await dc(relay, s.token!, 'POST', '/tap', { x: 5, y: 5 })).status).toBe(200);
    // A /screen answer teaches it too.
    s.state.currentApp = 'org.example.vault';
    expect((await dc(relay, s.token!, 'GET', '/screen')).body).toMatchObject({ packageName: 'org.example.vault' });
    expect((await dc(relay, s.token!, 'POST', '/tap', { x: 5, y: 5 })).body).toMatchObject({ error: 'blocked package org.example.vault' });
    s.state.currentApp = 'com.android.launcher3';
    expect((await dc(relay, s.token!, 'GET', '/current_app')).status).toBe(200);
    // An answer that repeats what the relay knows writes no currentApp.
    const n = readEvents(relay.home).filter((e) => e.type === 'bridge.command_answered' && e.data.currentApp !== undefined).length;
    expect((await dc(relay, s.token!, 'GET', '/current_app')).status).toBe(200);
    expect(readEvents(relay.home).filter((e) => e.type === 'bridge.command_answered' && e.data.currentApp !== undefined).length).toBe(n);
  });

  it('destructive verb, user allows: the command goes through after bridge.confirm', async () => {
    const s = await sim({ confirm: 'allow' });
    const r = await dc(relay, s.token!, 'POST', '/tap_text', { text: 'Send' });
    expect(r.status).toBe(200);
    const confirm = s.received.find((f) => f.type === 'bridge.confirm')!.payload;
    expect(confirm).toMatchObject({ verb: 'send', path: '/tap_text', text: 'Send', request_id: expect.any(String) });
    expect(decisions(s).map((x) => x.decision)).toEqual(['confirmation_requested', 'confirmation_allowed']);
    expect(sent(s)[0].data.requestId).toBe(confirm.request_id);
    // typed text and a tap's hint are read too; whole words only
    expect((await dc(relay, s.token!, 'POST', '/type', { text: 'please PAY now' })).status).toBe(200);
    expect((await dc(relay, s.token!, 'POST', '/tap', { x: 1, y: 1, text: 'Delete account' })).status).toBe(200);
    // a long press's text too, as a tap's (a long press on "Delete" is as destructive); without text, nothing to read
    expect((await dc(relay, s.token!, 'POST', '/long_press', { x: 1, y: 1, text: 'Submit order' })).status).toBe(200);
    expect((await dc(relay, s.token!, 'POST', '/long_press', { x: 1, y: 1 })).status).toBe(200);
    expect((await dc(relay, s.token!, 'POST', '/type', { text: 'sending postcards' })).status).toBe(200);
    expect(s.received.filter((f) => f.type === 'bridge.confirm').map((f) => f.payload.verb)).toEqual(['send', 'pay', 'delete', 'submit']);
  });

  it('destructive verb, user denies: 403 user denied destructive action', async () => {
    const s = await sim({ confirm: 'deny' });
    const r = await dc(relay, s.token!, 'POST', '/tap_text', { text: 'Confirm purchase' });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      ok: false,
      error: 'user denied destructive action',
      code: 'bridge.confirmation_denied',
      reason: 'confirmation_denied_or_timeout',
    });
    expect(commands(s)).toEqual([]);
    expect(decisions(s).map((x) => x.decision)).toEqual(['confirmation_requested', 'confirmation_denied']);
    expect(sent(s)).toHaveLength(0);
  });

  it('destructive verb, no answer: denied when the 30 s deadline passes on the injected clock', async () => {
    const s = await sim({ confirm: 'ignore' });
    const pending = dc(relay, s.token!, 'POST', '/send_sms', { to: '+1 202 555 0142', body: 'hi' });
    await s.nextReceived('bridge.confirm');
    await until(() => relay.loop.models.bridge.pendingConfirmations().some((p) => p.tokenPrefix === s.tokenPrefix));
    relay.clock.advance(29_000);
    await relay.sweep();
    expect(relay.loop.models.bridge.pendingConfirmations().some((p) => p.tokenPrefix === s.tokenPrefix)).toBe(true);
    relay.clock.advance(1_000);
    await relay.sweep();
    const r = await pending;
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: 'user denied destructive action', reason: 'confirmation_denied_or_timeout' });
    expect(decisions(s).map((x) => x.decision)).toEqual(['confirmation_requested', 'confirmation_timed_out']);
    // a late answer after the deadline changes nothing
    const id = s.received.find((f) => f.type === 'bridge.confirm')!.payload.request_id as string;
    s.send('bridge', 'bridge.confirm.result', { request_id: id, allow: true });
    await new Promise((r2) => setTimeout(r2, 50));
    expect(decisions(s).map((x) => x.decision)).toEqual(['confirmation_requested', 'confirmation_timed_out']);
    expect(commands(s)).toEqual([]);
  });

  it('trusted verbs skip the confirmation, but the master toggle and blocklist still win', async () => {
    const s = await sim({ trustedVerbs: ['send', 'send_sms'], confirm: 'deny' });
    expect((await dc(relay, s.token!, 'POST', '/tap_text', { text: 'Send' })).status).toBe(200);
    expect((await dc(relay, s.token!, 'POST', '/send_sms', { to: '+1 202 555 0142', body: 'hi' })).status).toBe(200);
    expect(s.received.filter((f) => f.type === 'bridge.confirm')).toHaveLength(0);
    expect(decisions(s).map((x) => [x.decision, x.verb])).toEqual([
      ['trusted_verb', 'send'],
      ['trusted_verb', 'send_sms'],
    ]);
    s.reportStatus({ currentApp: 'com.venmo' });
    await until(() => relay.loop.models.bridge.device(s.tokenPrefix!)?.currentApp === 'com.venmo');
    expect((await dc(relay, s.token!, 'POST', '/tap_text', { text: 'Send' })).body.error).toBe('blocked package com.venmo');
    s.reportStatus({ currentApp: 'com.android.launcher3', masterEnabled: false });
    await until(() => relay.loop.models.bridge.device(s.tokenPrefix!)?.masterEnabled === false);
    expect((await dc(relay, s.token!, 'POST', '/tap_text', { text: 'Send' })).body.code).toBe('bridge.master_disabled');
  });

  it('auto-disable: each command pushes the deadline back; when it passes the relay switches Device Control off and tells the phone', async () => {
    const s = await sim({ autoDisableMinutes: 30 });
    const dev = () => relay.loop.models.bridge.device(s.tokenPrefix!)!;
    const t0 = relay.clock.now().getTime();
    expect(dev().autoDisableAt).toBe(t0 + 30 * 60_000);
    relay.clock.advance(20 * 60_000);
    await relay.sweep();
    expect((await dc(relay, s.token!, 'POST', '/tap', { x: 1, y: 1 })).status).toBe(200);
    expect(dev().autoDisableAt).toBe(t0 + 50 * 60_000);
    expect(sent(s).pop()!.data.autoDisableAt).toBe(new Date(t0 + 50 * 60_000).toISOString());
    // probes do not keep Device Control alive
    relay.clock.advance(20 * 60_000);
    await relay.sweep();
    expect((await dc(relay, s.token!, 'GET', '/ping')).status).toBe(200);
    expect(dev().autoDisableAt).toBe(t0 + 50 * 60_000);
    expect(dev().masterEnabled).toBe(true);
    relay.clock.advance(10 * 60_000);
    await relay.sweep();
    const told = await s.nextReceived('bridge.master_disabled');
    expect(told).toMatchObject({ reason: 'auto_disable', idle_minutes: 30 });
    const fired = decisions(s).filter((x) => x.decision === 'auto_disabled');
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({ idleMinutes: 30, requestId: null, reason: expect.stringContaining('switched Device Control off') });
    const r = await dc(relay, s.token!, 'POST', '/tap', { x: 1, y: 1 });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('bridge.master_disabled');
    const status = await op(relay, 'GET', '/bridge/activity');
    expect(status.body.safety.find((x: { decision: string }) => x.decision === 'auto_disabled')).toBeDefined();
  });

  it('the operator sees the safety decisions with reasons', async () => {
    const r = await op(relay, 'GET', '/bridge/activity?limit=200');
    expect(r.status).toBe(200);
    const kinds = new Set(r.body.safety.map((x: { decision: string }) => x.decision));
    for (const k of [
      'master_off',
      'sideload_only',
      'blocked_package',
      'confirmation_requested',
      'confirmation_allowed',
      'confirmation_denied',
      'confirmation_timed_out',
      'trusted_verb',
      'auto_disabled',
    ]) {
      expect(kinds.has(k)).toBe(true);
    }
    const refused = r.body.activity.find((a: { safety: string }) => a.safety === 'confirmation_denied');
    expect(refused).toMatchObject({ outcome: 'refused', status: 403, path: '/tap_text' });
    const st = await op(relay, 'GET', '/bridge/status');
    expect(st.body.safety.decisions.blocked_package).toBeGreaterThanOrEqual(4);
    expect(st.body.safety.blocklist).toEqual(expect.arrayContaining(['com.chase.sig.android', 'com.example.bank.*']));
  });
});
