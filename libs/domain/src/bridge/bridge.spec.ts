import type { BridgeCommandSent, BridgeSafetyDecided } from '@svc/events';
import { bridgeActiveSelected, bridgeStatusReported, phoneDisconnected, relayStarted, sessionCreated } from '../../../../test/support/events';
import { given, Given, type Decision } from '../../../../test/support/given';
import { DomainError } from '../errors';
import { ReadModels } from '../read-models';
import {
  autoDisableDue,
  expireConfirmations,
  planCommand,
  reportStatus,
  resolveConfirmation,
  type BridgeStatusInput,
  type CommandInput,
} from './bridge';
import type { Driver } from './bridge-authority';
import { pickDevice } from './which-phone';
import { commandShape } from './redact';
import { DEFAULT_SAFETY_SETTINGS } from './safety';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);
const iso = (ms: number) => at(ms).toISOString();
const MIN = 60_000;
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
const cmd = (prefix: string, path: string, body: Record<string, unknown> = {}): CommandInput => ({
  requestId: `r-${path}`,
  tokenPrefix: prefix,
  method: 'POST',
  path,
  body,
  params: {},
  confirmTimeoutSeconds: 30,
});

/** The phone `aaaa1111` reports its status; the relay's default auto-disable is 30 minutes. */
const report =
  (p: Partial<BridgeStatusInput> = {}): Decision =>
  (m, now) =>
    reportStatus(m, status('aaaa1111', p), 30, now);
const plan =
  (c: CommandInput): Decision =>
  (m, now) =>
    planCommand(m, c, DEFAULT_SAFETY_SETTINGS, now);
/** A `bridge.safety_decided` about phone `aaaa1111`'s command `r-<path>` (any reason unless named). */
const decided = (path: string, data: Partial<BridgeSafetyDecided['data']>) => ({
  type: 'bridge.safety_decided' as const,
  data: { tokenPrefix: 'aaaa1111', requestId: `r-${path}`, method: 'POST', path, reason: expect.any(String), ...data },
});
const sent = (path: string, data: Partial<BridgeCommandSent['data']>) => ({
  type: 'bridge.command_sent' as const,
  data: { requestId: `r-${path}`, tokenPrefix: 'aaaa1111', connId: 'conn-aaaa1111', method: 'POST', path, ...data },
});
const autoDisabled = (idleMinutes: number) => ({
  type: 'bridge.safety_decided' as const,
  data: { decision: 'auto_disabled', tokenPrefix: 'aaaa1111', requestId: null, method: null, path: null, idleMinutes, reason: expect.any(String) },
});

describe('bridge rules', () => {
  it('reportStatus starts the auto-disable clock, keeps it while unchanged, and writes nothing for a repeat', () => {
    const g = given([session('aaaa1111', 'dev-aaaa1111')]);
    g.when(report(), at(0)).then([bridgeStatusReported({ autoDisableMinutes: 30, autoDisableAt: iso(30 * MIN) })]);
    g.when(report(), at(MIN)).then([]);
    g.when(report({ battery: 50 }), at(MIN)).then([bridgeStatusReported({ battery: 50, autoDisableAt: iso(30 * MIN) })]);
    g.when(report({ battery: 50, masterEnabled: false }), at(MIN)).then([
      bridgeStatusReported({ battery: 50, masterEnabled: false, autoDisableAt: null }),
    ]);
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
    g.apply([bridgeStatusReported({ tokenPrefix: 'aaaa1111', deviceId: 'dev-a', deviceName: 'Pixel' })]);
    expect(pickDevice(g.models, {}, now).tokenPrefix).toBe('aaaa1111');
    g.apply([bridgeStatusReported({ tokenPrefix: 'bbbb2222', deviceId: 'dev-b', deviceName: 'Pixel' })]);
    expect(code(() => pickDevice(g.models, {}, now))).toBe('bridge.device_ambiguous');
    expect(pickDevice(g.models, { driver: onHost('bbbb2222') }, now).tokenPrefix).toBe('bbbb2222');
    expect(pickDevice(g.models, { selector: 'dev-a' }, now).tokenPrefix).toBe('aaaa1111');
    expect(pickDevice(g.models, { selector: 'bbbb' }, now).tokenPrefix).toBe('bbbb2222');
    expect(code(() => pickDevice(g.models, { selector: 'bbb' }, now))).toBe('bridge.device_not_found');
    expect(code(() => pickDevice(g.models, { selector: 'pixel' }, now))).toBe('bridge.device_ambiguous');
    expect(code(() => pickDevice(g.models, { selector: 'dev-c' }, now))).toBe('bridge.device_offline');
    g.apply([bridgeActiveSelected({ tokenPrefix: 'bbbb2222', deviceId: 'dev-b' })]);
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
    const g = given([session('aaaa1111', 'dev-a'), bridgeStatusReported()]);
    g.when(plan(cmd('aaaa1111', '/open_app', { package: 'com.chase.sig.android' })), at(0)).then([
      decided('/open_app', { decision: 'blocked_package', package: 'com.chase.sig.android' }),
    ]);
    g.when(plan(cmd('aaaa1111', '/tap', { x: 1, y: 2 })), at(MIN)).then([
      decided('/tap', { decision: 'allow' }),
      sent('/tap', { shape: { x: 1, y: 2 }, autoDisableAt: iso(31 * MIN) }),
    ]);
  });

  it('confirmation: requested with a deadline; answered once; silence past the deadline is a denial', () => {
    const g = given([session('aaaa1111', 'dev-a'), bridgeStatusReported()]);
    const answer =
      (tokenPrefix: string): Decision =>
      (m) =>
        resolveConfirmation(m, { requestId: 'r-/tap_text', tokenPrefix, allow: true });
    g.when(plan(cmd('aaaa1111', '/tap_text', { text: 'Send' })), at(0)).then([
      decided('/tap_text', { decision: 'confirmation_requested', verb: 'send', by: 'relay', deadline: iso(30_000) }),
    ]);
    g.when(answer('zzzz9999')).then([]);
    g.when(expireConfirmations, at(29_999)).then([]);
    g.when(expireConfirmations, at(30_000)).then([decided('/tap_text', { decision: 'confirmation_timed_out', method: null, verb: 'send' })]);
    g.when(answer('aaaa1111')).then([]);
    // after an allowed confirmation the command is sent without a second decision
    g.when(plan({ ...cmd('aaaa1111', '/tap_text', { text: 'Send' }), confirmed: true }), at(40_000)).then([
      sent('/tap_text', { shape: { text: 'string' }, autoDisableAt: iso(40_000 + 30 * MIN) }),
    ]);
  });

  it('autoDisableDue fires once at the deadline and the projection switches master off', () => {
    const g = given([session('aaaa1111', 'dev-a')]);
    g.when(report({ autoDisableMinutes: 10 }), at(0)).then([bridgeStatusReported({ autoDisableMinutes: 10, autoDisableAt: iso(10 * MIN) })]);
    g.when(autoDisableDue, at(10 * MIN - 1)).then([]);
    g.when(autoDisableDue, at(10 * MIN)).then([autoDisabled(10)]);
    expect(g.models.bridge.device('aaaa1111')!.masterEnabled).toBe(false);
    g.when(autoDisableDue, at(20 * MIN)).then([]);
  });

  it('a phone that keeps its own idle expiry gets no relay deadline: none at status, none pushed back by a command, never auto_disabled', () => {
    const g = given([session('aaaa1111', 'dev-a')]);
    g.when(report({ autoDisableMinutes: 20, autoDisableBy: 'phone' }), at(0)).then([
      bridgeStatusReported({ autoDisableMinutes: 20, autoDisableAt: null, autoDisableBy: 'phone' }),
    ]);
    g.when(plan(cmd('aaaa1111', '/tap', { x: 1, y: 2 })), at(MIN)).then([
      decided('/tap', { decision: 'allow' }),
      sent('/tap', { shape: { x: 1, y: 2 }, autoDisableAt: null }),
    ]);
    g.when(autoDisableDue, at(24 * 60 * MIN)).then([]);
    // Its minutes are what it reports, never the relay's default; a status that says none records 0.
    g.when(report({ autoDisableMinutes: null, autoDisableBy: 'phone' }), at(2 * MIN)).then([
      bridgeStatusReported({ autoDisableMinutes: 0, autoDisableAt: null, autoDisableBy: 'phone' }),
    ]);
    // The negotiation changing on a new socket is a change worth recording.
    g.when(report({ autoDisableMinutes: 20, autoDisableBy: 'relay' }), at(2 * MIN)).then([
      bridgeStatusReported({ autoDisableMinutes: 20, autoDisableAt: iso(2 * MIN + 20 * MIN), autoDisableBy: 'relay' }),
    ]);
  });

  it('projection: a status from before the negotiation (no autoDisableBy) is the relay keeping the deadline', () => {
    const { autoDisableBy: _, ...old } = bridgeStatusReported({ autoDisableMinutes: 10, autoDisableAt: iso(10 * MIN) }).data;
    const g = given([session('aaaa1111', 'dev-a'), { type: 'bridge.status_reported', data: old }]);
    expect(g.models.bridge.device('aaaa1111')).toMatchObject({ autoDisableBy: 'relay', autoDisableAt: T0 + 10 * MIN });
    g.when(autoDisableDue, at(10 * MIN)).then([autoDisabled(10)]);
  });

  it('projection: the same event twice is harmless for devices; relay.started empties devices and interrupts pending commands', () => {
    const g = new Given().apply([session('aaaa1111', 'dev-a'), bridgeStatusReported(), bridgeStatusReported()]);
    expect(g.models.bridge.allDevices()).toHaveLength(1);
    g.when(plan(cmd('aaaa1111', '/tap', { x: 1, y: 1 })), at(0));
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
