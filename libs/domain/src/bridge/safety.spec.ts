import {
  DEFAULT_SAFETY_SETTINGS,
  destructiveVerbs,
  evaluateSafety,
  isBlocked,
  targetPackages,
  type PhoneSafetyState,
  type SafetyInput,
} from './safety';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const phone = (p: Partial<PhoneSafetyState> = {}): PhoneSafetyState => ({
  masterEnabled: true,
  deviceControlSupported: true,
  currentApp: 'com.android.launcher3',
  trustedVerbs: [],
  autoDisableMinutes: 30,
  ...p,
});
const run = (path: string, body: Record<string, unknown> = {}, p: Partial<PhoneSafetyState> = {}, settings = DEFAULT_SAFETY_SETTINGS) =>
  evaluateSafety({ path, body, phone: phone(p), settings, now: NOW } satisfies SafetyInput);
const in30 = new Date(NOW.getTime() + 30 * 60_000);

describe('evaluateSafety', () => {
  it('allows a plain command and pushes the auto-disable deadline back', () => {
    expect(run('/tap', { x: 1, y: 2 })).toEqual({ kind: 'allow', decision: 'allow', reason: expect.any(String), autoDisableAt: in30 });
  });

  it('a build without device control is refused first, even for /ping', () => {
    expect(run('/ping', {}, { deviceControlSupported: false, masterEnabled: false })).toMatchObject({ kind: 'deny', decision: 'sideload_only' });
  });

  describe('master toggle', () => {
    it.each(['/tap', '/screen', '/open_app', '/send_sms', '/events', '/screenshot', '/setup'])('refuses %s while off', (path) => {
      expect(run(path, { package: 'com.android.chrome' }, { masterEnabled: false })).toMatchObject({ kind: 'deny', decision: 'master_off' });
    });
    it.each(['/ping', '/current_app', '/return_to_svc', '/return_to_hermes'])('lets %s through while off, without rescheduling', (path) => {
      expect(run(path, {}, { masterEnabled: false })).toMatchObject({ kind: 'allow', decision: 'exempt', autoDisableAt: null });
    });
    it('wins over a trusted verb', () => {
      expect(run('/tap_text', { text: 'Send' }, { masterEnabled: false, trustedVerbs: ['send'] })).toMatchObject({ decision: 'master_off' });
    });
  });

  describe('blocklist', () => {
    it('refuses a blocklisted target package with its name', () => {
      expect(run('/open_app', { package: 'com.chase.sig.android' })).toEqual({
        kind: 'deny',
        decision: 'blocked_package',
        reason: expect.stringContaining('target package'),
        package: 'com.chase.sig.android',
      });
    });
    it('reads the target of intents: package, else the component', () => {
      expect(run('/send_intent', { action: 'a', component: 'com.x8bit.bitwarden/.Main' })).toMatchObject({
        decision: 'blocked_package',
        package: 'com.x8bit.bitwarden',
      });
      expect(run('/broadcast', { action: 'a', package: 'com.paypal.android.p2pmobile' })).toMatchObject({ decision: 'blocked_package' });
      expect(run('/share_media', { text: 'x', package: 'com.venmo' })).toMatchObject({ decision: 'blocked_package' });
    });
    it('reads the package an MMS or a share is handed to', () => {
      expect(targetPackages('/send_mms', { to: '1', package: 'com.venmo' })).toEqual(['com.venmo']);
      expect(run('/send_mms', { to: '1', text: 'x', package: 'com.venmo' })).toEqual({
        kind: 'deny',
        decision: 'blocked_package',
        reason: 'target package com.venmo is on the blocklist',
        package: 'com.venmo',
      });
      // Without one, the system's chooser opens and the user picks.
      expect(run('/send_mms', { to: '1', text: 'x' }).kind).toBe('allow');
    });
    it('refuses screen work while a blocklisted app is in the foreground', () => {
      for (const path of ['/screen', '/screen_hash', '/tap', '/type', '/clipboard', '/events', '/find_nodes']) {
        expect(run(path, { text: 'x' }, { currentApp: 'com.google.android.apps.authenticator2' })).toMatchObject({
          decision: 'blocked_package',
          package: 'com.google.android.apps.authenticator2',
        });
      }
    });
    it('lets the phone leave a blocklisted app (home/back keys, opening another app, returning to svc)', () => {
      const p = { currentApp: 'com.chase.sig.android' };
      expect(run('/press_key', { key: 'home' }, p).kind).toBe('allow');
      expect(run('/open_app', { package: 'com.android.chrome' }, p).kind).toBe('allow');
      expect(run('/return_to_svc', {}, p).kind).toBe('allow');
      expect(run('/ping', {}, p).kind).toBe('allow');
    });
    it('wins over a trusted verb', () => {
      expect(run('/tap_text', { text: 'Pay' }, { currentApp: 'com.venmo', trustedVerbs: ['pay'] })).toMatchObject({ decision: 'blocked_package' });
    });
    it('matches case-insensitively, and vendor.* entries cover a vendor', () => {
      expect(isBlocked('COM.Chase.Sig.Android', ['com.chase.sig.android'])).toBe(true);
      expect(isBlocked('com.example.bank.mobile', ['com.example.bank.*'])).toBe(true);
      expect(isBlocked('com.example.bank', ['com.example.bank.*'])).toBe(true);
      expect(isBlocked('com.example.banker', ['com.example.bank.*'])).toBe(false);
      expect(isBlocked('com.chase.sig.android.extra', ['com.chase.sig.android'])).toBe(false);
    });
    it('ignores spaces around a package id, the phone’s or an operator’s entry, and records the id itself', () => {
      expect(isBlocked(' com.venmo ', ['com.venmo'])).toBe(true);
      expect(isBlocked('com.example.bank.app', [' com.example.bank.* ', ''])).toBe(true);
      expect(isBlocked('com.example', ['', ' '])).toBe(false);
      expect(run('/open_app', { package: ' com.venmo ' })).toMatchObject({ decision: 'blocked_package', package: 'com.venmo' });
      expect(targetPackages('/send_intent', { action: 'a', component: ' com.venmo /.Main' })).toEqual(['com.venmo']);
    });
    it('no target for routes that launch nothing', () => {
      expect(targetPackages('/tap', { package: 'com.chase.sig.android' })).toEqual([]);
    });
    it('an intent naming a package and a component is checked for both (the component wins on Android)', () => {
      expect(targetPackages('/send_intent', { package: 'com.android.chrome', component: 'com.venmo/.Main' })).toEqual([
        'com.android.chrome',
        'com.venmo',
      ]);
      expect(run('/send_intent', { action: 'a.b', package: 'com.android.chrome', component: 'com.venmo/.Main' })).toMatchObject({
        decision: 'blocked_package',
        package: 'com.venmo',
      });
    });
    it('an intent or broadcast naming no app is refused: the blocklist cannot see where it lands', () => {
      for (const path of ['/send_intent', '/broadcast'])
        expect(run(path, { action: 'android.intent.action.VIEW', data: 'venmo://paycharge' })).toMatchObject({
          kind: 'deny',
          decision: 'implicit_intent',
        });
      expect(run('/send_intent', { action: 'a.b', component: 'com.example/.Main' }).kind).toBe('allow');
      expect(run('/share_media', { text: 'hi' }).kind).toBe('allow');
    });
  });

  describe('destructive verbs', () => {
    it('asks the phone for a destructive tap_text, type, or tap with a text hint', () => {
      expect(run('/tap_text', { text: 'Send' })).toEqual({
        kind: 'confirm',
        decision: 'confirmation_requested',
        reason: expect.any(String),
        verb: 'send',
        text: 'Send',
      });
      expect(run('/type', { text: 'I want to WITHDRAW it all' })).toMatchObject({ kind: 'confirm', verb: 'withdraw' });
      expect(run('/tap', { x: 1, y: 1, text: 'Buy now' })).toMatchObject({ kind: 'confirm', verb: 'buy' });
      expect(run('/tap', { x: 1, y: 1, hint: 'Delete' })).toMatchObject({ kind: 'confirm', verb: 'delete' });
      // A long press on "Delete" is as destructive as a tap on it (the element tools send the label as text).
      expect(run('/long_press', { x: 1, y: 1, text: 'Delete' })).toMatchObject({ kind: 'confirm', verb: 'delete', text: 'Delete' });
      expect(run('/long_press', { x: 1, y: 1 })).toMatchObject({ kind: 'allow', decision: 'allow' });
    });
    it('matches whole words only', () => {
      for (const text of ['Sending', 'payment', 'resubmit', 'posted', 'Confirmation']) expect(run('/tap_text', { text }).kind).toBe('allow');
      for (const text of ['send!', '(pay)', 'post-it', 'Submit_form?']) {
        const v = run('/tap_text', { text });
        expect(v.kind).toBe(text === 'Submit_form?' ? 'allow' : 'confirm');
      }
    });
    it('ignores text on routes without the gate', () => {
      expect(run('/find_nodes', { text: 'Send' }).kind).toBe('allow');
      expect(run('/wait', { timeoutMs: 10, text: 'Delete' }).kind).toBe('allow');
    });
    it('treats /send_sms and /call as destructive by themselves', () => {
      expect(run('/send_sms', { to: '1', body: 'hello' })).toMatchObject({ kind: 'confirm', verb: 'send_sms' });
      expect(run('/call', { number: '1' })).toMatchObject({ kind: 'confirm', verb: 'call' });
    });
    it('skips the confirmation for verbs the phone trusts, recording the verb', () => {
      expect(run('/tap_text', { text: 'Send' }, { trustedVerbs: ['SEND'] })).toEqual({
        kind: 'allow',
        decision: 'trusted_verb',
        reason: expect.any(String),
        verb: 'send',
        autoDisableAt: in30,
      });
      expect(run('/call', { number: '1' }, { trustedVerbs: ['call'] })).toMatchObject({ decision: 'trusted_verb', verb: 'call' });
    });
    it('asks when any verb of the text is not trusted', () => {
      expect(run('/tap_text', { text: 'Confirm and pay' }, { trustedVerbs: ['confirm'] })).toMatchObject({ kind: 'confirm', verb: 'pay' });
      expect(destructiveVerbs('/tap_text', { text: 'Confirm and pay' }, DEFAULT_SAFETY_SETTINGS)).toEqual(['confirm', 'pay']);
    });
    it('operators may add verbs', () => {
      const settings = { ...DEFAULT_SAFETY_SETTINGS, destructiveVerbs: [...DEFAULT_SAFETY_SETTINGS.destructiveVerbs, 'unsubscribe'] };
      expect(run('/tap_text', { text: 'Unsubscribe' }, {}, settings)).toMatchObject({ kind: 'confirm', verb: 'unsubscribe' });
    });
  });

  describe('auto-disable reschedule', () => {
    it('probes and exempt routes do not keep Device Control alive', () => {
      expect(run('/ping')).toMatchObject({ autoDisableAt: null });
      expect(run('/current_app')).toMatchObject({ autoDisableAt: null });
    });
    it('0 minutes on the phone turns auto-disable off', () => {
      expect(run('/tap', { x: 1, y: 1 }, { autoDisableMinutes: 0 })).toMatchObject({ kind: 'allow', autoDisableAt: null });
    });
    it("follows the phone's minutes", () => {
      expect(run('/tap', { x: 1, y: 1 }, { autoDisableMinutes: 5 })).toMatchObject({ autoDisableAt: new Date(NOW.getTime() + 5 * 60_000) });
    });
  });
});
