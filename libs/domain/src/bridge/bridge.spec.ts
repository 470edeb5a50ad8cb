import { phoneDisconnected, relayStarted, sessionCreated } from '../../../../test/support/events';
import { Given } from '../../../../test/support/given';
import { DomainError } from '../errors';
import { ReadModels } from '../read-models';
import { autoDisableDue, expireConfirmations, planCommand, reportStatus, resolveConfirmation, type BridgeStatusInput } from './bridge';
import type { Driver } from './bridge-authority';
import { pickDevice } from './which-phone';
import { commandShape } from './redact';
import { DEFAULT_SAFETY_SETTINGS } from './safety';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);
const driver = (tokenPrefix: string, onHost: boolean): Driver => ({ caller: { kind: 'device', tokenPrefix, deviceId: '', deviceName: '' }, onHost });
const onHost = (tokenPrefix: string) => driver(tokenPrefix, true);

const session = (prefix: string, deviceId: string, deviceName = 'Phone') =>
  sessionCreated({ tokenPrefix: prefix, deviceId, deviceName, grants: { bridge: null } });
const status = (prefix: string, p: Partial<BridgeStatusInput> = {}): BridgeStatusInput => ({
  tokenPrefix: prefix,
  connId: `conn-${prefix}`,
  deviceId: `dev-${prefix}`,
  deviceName: 'Phone',
  screenOn: true,
  battery: 80,
  currentApp: 'com.android.launcher3',
  accessibilityEnabled: true,
  masterEnabled: true,
  deviceControlSupported: true,
  trustedVerbs: [],
  autoDisableMinutes: null,
  autoDisableBy: 'relay',
  ...p,
});
const cmd = (prefix: string, path: string, body: Record<string, unknown> = {}) => ({
  requestId: `r-${path}`,
  tokenPrefix: prefix,
  method: 'POST',
  path,
  body,
  params: {},
  confirmTimeoutSeconds: 30,
});

describe('bridge rules', () => {
  it('reportStatus starts the auto-disable clock, keeps it while unchanged, and writes nothing for a repeat', () => {
    const g = new Given().apply([session('aaaa1111', 'dev-aaaa1111')]);
    const first = reportStatus(g.models, status('aaaa1111'), 30, at(0));
    expect(first).toHaveLength(1);
    expect(first[0].data).toMatchObject({ masterEnabled: true, autoDisableMinutes: 30, autoDisableAt: at(30 * 60_000).toISOString() });
    g.apply(first);
    expect(reportStatus(g.models, status('aaaa1111'), 30, at(60_000))).toEqual([]);
    const battery = reportStatus(g.models, status('aaaa1111', { battery: 50 }), 30, at(60_000));
    expect(battery[0].data).toMatchObject({ battery: 50, autoDisableAt: at(30 * 60_000).toISOString() });
    const off = reportStatus(g.models, status('aaaa1111', { masterEnabled: false }), 30, at(60_000));
    expect(off[0].data).toMatchObject({ autoDisableAt: null });
  });

  it('pickDevice: selector, then active, then the caller’s own, then the only one', () => {
    const g = new Given().apply([session('aaaa1111', 'dev-a', 'Pixel'), session('bbbb2222', 'dev-b', 'Pixel'), session('cccc3333', 'dev-c', 'Host')]);
    const now = at(0);
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as DomainError).code;
      }
      return 'none';
    };
    expect(code(() => pickDevice(g.models, {}, now))).toBe('bridge.no_device');
    g.apply([...reportStatus(g.models, status('aaaa1111', { deviceId: 'dev-a', deviceName: 'Pixel' }), 30, now)]);
    expect(pickDevice(g.models, {}, now).tokenPrefix).toBe('aaaa1111');
    g.apply([...reportStatus(g.models, status('bbbb2222', { deviceId: 'dev-b', deviceName: 'Pixel' }), 30, now)]);
    expect(code(() => pickDevice(g.models, {}, now))).toBe('bridge.device_ambiguous');
    expect(pickDevice(g.models, { driver: onHost('bbbb2222') }, now).tokenPrefix).toBe('bbbb2222');
    expect(pickDevice(g.models, { selector: 'dev-a' }, now).tokenPrefix).toBe('aaaa1111');
    expect(pickDevice(g.models, { selector: 'bbbb' }, now).tokenPrefix).toBe('bbbb2222');
    expect(code(() => pickDevice(g.models, { selector: 'bbb' }, now))).toBe('bridge.device_not_found');
    expect(code(() => pickDevice(g.models, { selector: 'pixel' }, now))).toBe('bridge.device_ambiguous');
    expect(code(() => pickDevice(g.models, { selector: 'dev-c' }, now))).toBe('bridge.device_offline');
    g.apply([{ type: 'bridge.active_selected', data: { tokenPrefix: 'bbbb2222', deviceId: 'dev-b', by: 'operator' } }]);
    expect(pickDevice(g.models, { driver: onHost('aaaa1111') }, now).tokenPrefix).toBe('bbbb2222');
    // From another machine a session is held to its own phone: a selector is matched against it alone, and
    // neither the active phone nor the only one stands in for it.
    const away = driver('aaaa1111', false);
    expect(pickDevice(g.models, { driver: away }, now).tokenPrefix).toBe('aaaa1111');
    expect(pickDevice(g.models, { driver: away, selector: 'dev-a' }, now).tokenPrefix).toBe('aaaa1111');
    expect(pickDevice(g.models, { driver: away, selector: 'Pixel' }, now).tokenPrefix).toBe('aaaa1111'); // its own name, shared or not
    for (const selector of ['dev-b', 'bbbb', 'nobody'])
      expect(code(() => pickDevice(g.models, { driver: away, selector }, now))).toBe('bridge.not_your_phone');
    expect(code(() => pickDevice(g.models, { driver: driver('cccc3333', false) }, now))).toBe('bridge.not_your_phone');
    g.apply([phoneDisconnected({ connId: 'conn-bbbb2222', tokenPrefix: 'bbbb2222' })]);
    expect(code(() => pickDevice(g.models, {}, now))).toBe('bridge.device_offline');
  });

  it('planCommand: a refusal is one decision event; an allowed command is the decision plus command_sent', () => {
    const g = new Given().apply([session('aaaa1111', 'dev-a')]);
    g.apply(reportStatus(g.models, status('aaaa1111'), 30, at(0)));
    const denied = planCommand(g.models, cmd('aaaa1111', '/open_app', { package: 'com.chase.sig.android' }), DEFAULT_SAFETY_SETTINGS, at(0));
    expect(denied.map((e) => e.type)).toEqual(['bridge.safety_decided']);
    expect(denied[0].data).toMatchObject({ decision: 'blocked_package', package: 'com.chase.sig.android', path: '/open_app' });
    const ok = planCommand(g.models, cmd('aaaa1111', '/tap', { x: 1, y: 2 }), DEFAULT_SAFETY_SETTINGS, at(60_000));
    expect(ok.map((e) => e.type)).toEqual(['bridge.safety_decided', 'bridge.command_sent']);
    expect(ok[1].data).toMatchObject({ shape: { x: 1, y: 2 }, autoDisableAt: at(31 * 60_000).toISOString(), connId: 'conn-aaaa1111' });
  });

  it('confirmation: requested with a deadline; answered once; silence past the deadline is a denial', () => {
    const g = new Given().apply([session('aaaa1111', 'dev-a')]);
    g.apply(reportStatus(g.models, status('aaaa1111'), 30, at(0)));
    const asked = planCommand(g.models, cmd('aaaa1111', '/tap_text', { text: 'Send' }), DEFAULT_SAFETY_SETTINGS, at(0));
    expect(asked[0].data).toMatchObject({ decision: 'confirmation_requested', verb: 'send', deadline: at(30_000).toISOString() });
    g.apply(asked);
    expect(resolveConfirmation(g.models, { requestId: 'r-/tap_text', tokenPrefix: 'zzzz9999', allow: true })).toEqual([]);
    expect(expireConfirmations(g.models, at(29_999))).toEqual([]);
    const expired = expireConfirmations(g.models, at(30_000));
    expect(expired[0].data).toMatchObject({ decision: 'confirmation_timed_out', requestId: 'r-/tap_text' });
    g.apply(expired);
    expect(resolveConfirmation(g.models, { requestId: 'r-/tap_text', tokenPrefix: 'aaaa1111', allow: true })).toEqual([]);
    // after an allowed confirmation the command is sent without a second decision
    const again = planCommand(g.models, { ...cmd('aaaa1111', '/tap_text', { text: 'Send' }), confirmed: true }, DEFAULT_SAFETY_SETTINGS, at(40_000));
    expect(again.map((e) => e.type)).toEqual(['bridge.command_sent']);
  });

  it('autoDisableDue fires once at the deadline and the projection switches master off', () => {
    const g = new Given().apply([session('aaaa1111', 'dev-a')]);
    g.apply(reportStatus(g.models, status('aaaa1111', { autoDisableMinutes: 10 }), 30, at(0)));
    expect(autoDisableDue(g.models, at(10 * 60_000 - 1))).toEqual([]);
    const fired = autoDisableDue(g.models, at(10 * 60_000));
    expect(fired[0].data).toMatchObject({ decision: 'auto_disabled', idleMinutes: 10, tokenPrefix: 'aaaa1111' });
    g.apply(fired);
    expect(g.models.bridge.device('aaaa1111')!.masterEnabled).toBe(false);
    expect(autoDisableDue(g.models, at(20 * 60_000))).toEqual([]);
  });

  it('a phone that keeps its own idle expiry gets no relay deadline: none at status, none pushed back by a command, never auto_disabled', () => {
    const g = new Given().apply([session('aaaa1111', 'dev-a')]);
    const first = reportStatus(g.models, status('aaaa1111', { autoDisableMinutes: 20, autoDisableBy: 'phone' }), 30, at(0));
    expect(first[0].data).toMatchObject({ autoDisableMinutes: 20, autoDisableAt: null, autoDisableBy: 'phone' });
    g.apply(first);
    const sent = planCommand(g.models, cmd('aaaa1111', '/tap', { x: 1, y: 2 }), DEFAULT_SAFETY_SETTINGS, at(60_000));
    expect(sent.find((e) => e.type === 'bridge.command_sent')!.data).toMatchObject({ autoDisableAt: null });
    g.apply(sent);
    expect(autoDisableDue(g.models, at(24 * 3_600_000))).toEqual([]);
    // Its minutes are what it reports, never the relay's default; a status that says none records 0.
    const silent = reportStatus(g.models, status('aaaa1111', { autoDisableMinutes: null, autoDisableBy: 'phone' }), 30, at(120_000));
    expect(silent[0].data).toMatchObject({ autoDisableMinutes: 0, autoDisableAt: null });
    // The negotiation changing on a new socket is a change worth recording.
    expect(reportStatus(g.models, status('aaaa1111', { autoDisableMinutes: 20, autoDisableBy: 'relay' }), 30, at(120_000))[0].data).toMatchObject({
      autoDisableBy: 'relay',
      autoDisableAt: at(120_000 + 20 * 60_000).toISOString(),
    });
  });

  it('projection: a status from before the negotiation (no autoDisableBy) is the relay keeping the deadline', () => {
    const g = new Given().apply([session('aaaa1111', 'dev-a')]);
    const [e] = reportStatus(g.models, status('aaaa1111', { autoDisableMinutes: 10 }), 30, at(0));
    const { autoDisableBy: _, ...old } = e.data as Record<string, unknown>;
    g.apply([{ ...e, data: old } as typeof e]);
    expect(g.models.bridge.device('aaaa1111')).toMatchObject({ autoDisableBy: 'relay', autoDisableAt: T0 + 10 * 60_000 });
    expect(autoDisableDue(g.models, at(10 * 60_000))).toHaveLength(1);
  });

  it('projection: the same event twice is harmless for devices; relay.started empties devices and interrupts pending commands', () => {
    const g = new Given().apply([session('aaaa1111', 'dev-a')]);
    const st = reportStatus(g.models, status('aaaa1111'), 30, at(0));
    g.apply(st).apply(st);
    expect(g.models.bridge.allDevices()).toHaveLength(1);
    g.apply(planCommand(g.models, cmd('aaaa1111', '/tap', { x: 1, y: 1 }), DEFAULT_SAFETY_SETTINGS, at(0)));
    expect(g.models.bridge.inFlight()).toBe(1);
    g.apply([relayStarted()]);
    expect(g.models.bridge.allDevices()).toEqual([]);
    expect(g.models.bridge.activity()[0].outcome).toBe('interrupted');
    const copy = new ReadModels();
    copy.restore(structuredClone(g.models.snapshot()));
    expect(copy.bridge.snapshot()).toEqual(g.models.bridge.snapshot());
  });
});

describe('commandShape', () => {
  it('keeps how a command acts, reduces what the user said to its type', () => {
    expect(commandShape({ x: 10, y: 20, nodeId: '3' })).toEqual({ x: 10, y: 20, nodeId: '3' });
    expect(commandShape({ text: 'my password is hunter2', clearFirst: true })).toEqual({ text: 'string', clearFirst: true });
    expect(commandShape({ to: '+1 555', body: 'secret' })).toEqual({ to: 'string', body: 'string' });
    expect(commandShape({ query: 'Ada' })).toEqual({ query: 'string' });
    expect(commandShape({ attachments: [{ path: '/home/me/x.png' }], text: '' })).toEqual({ attachments: 'array(1)', text: 'string(empty)' });
    expect(commandShape({ action: 'android.intent.action.VIEW', data: 'https://private.example/?q=1', extras: { a: 1 } })).toEqual({
      action: 'android.intent.action.VIEW',
      data: 'string',
      extras: 'object',
    });
    expect(commandShape({}, { limit: 5, since: 10 })).toEqual({ '?limit': 5, '?since': 10 });
  });
});
