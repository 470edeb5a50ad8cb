import { clientNames } from '../spelling';
import {
  bridgeStatusOf,
  autoDisableSide,
  confirmationSide,
  mediaTokenOf,
  phoneDecision,
  reportedStatusValue,
  screenAsAsked,
  screenSizeShown,
  statusFieldRule,
  statusGroupRule,
  swipeCoordinates,
  toPhoneCommand,
} from './app-wire';

describe('a bridge.status', () => {
  it('reads each field nested before flat; a group that is not an object holds nothing', () => {
    const p = {
      device: { battery_percent: -1, current_app: 'unknown', screen_on: false },
      bridge: { master_enabled: true, accessibility_granted: false, accessibility_enabled: true },
      safety: { auto_disable_minutes: 15 },
      battery: 50,
      master_enabled: false,
      device_control_supported: true,
    };
    expect(reportedStatusValue(p, 'battery')).toBe(-1);
    expect(reportedStatusValue(p, 'master_enabled')).toBe(true);
    expect(reportedStatusValue(p, 'accessibility_enabled')).toBe(false);
    expect(reportedStatusValue(p, 'device_control_supported')).toBe(true);
    expect(reportedStatusValue(p, 'trusted_destructive_verbs')).toBeUndefined();
    expect(reportedStatusValue({ bridge: 'on', master_enabled: true }, 'master_enabled')).toBe(true);
    expect(reportedStatusValue({ device: { screen_on: null }, screen_on: true }, 'screen_on')).toBe(true);
  });

  it('names the bad field in the words the app has always had; not said always passes', () => {
    const bad = (message: string) => expect.objectContaining({ code: 'bad_frame', message });
    expect(() => statusGroupRule('bridge', [])).toThrow(bad('bridge.status: bridge must be an object'));
    expect(() => statusGroupRule('safety', null)).not.toThrow();
    expect(() => statusFieldRule('device_control_supported', 1, 1440)).toThrow(bad('bridge.status: device_control_supported must be a boolean'));
    expect(() => statusFieldRule('battery', 'full', 1440)).toThrow(bad('bridge.status: battery must be a number (0-100; -1: unknown)'));
    expect(() => statusFieldRule('current_app', 'x'.repeat(256), 1440)).toThrow(bad('bridge.status: current_app must be a package id string'));
    expect(() => statusFieldRule('trusted_destructive_verbs', [''], 1440)).toThrow(
      bad('bridge.status: trusted_destructive_verbs must be an array of at most 64 verb strings'),
    );
    expect(() => statusFieldRule('auto_disable_minutes', 5000, 1440)).toThrow(
      bad('bridge.status: auto_disable_minutes must be a number 0-1440 (0: never)'),
    );
    expect(() => statusFieldRule('battery', undefined, 1440)).not.toThrow();
  });

  it('treats -1 / "unknown" as not known, a phone that does not say as switched off', () => {
    expect(
      bridgeStatusOf({
        screen_on: false,
        battery: -1,
        current_app: 'unknown',
        accessibility_enabled: false,
        master_enabled: true,
        auto_disable_minutes: 15,
      }),
    ).toEqual({
      screenOn: false,
      battery: null,
      currentApp: null,
      accessibilityEnabled: false,
      masterEnabled: true,
      deviceControlSupported: false,
      trustedVerbs: [],
      autoDisableMinutes: 15,
    });
    expect(bridgeStatusOf({ battery: 40.4, current_app: 'com.android.chrome' })).toMatchObject({
      battery: 40,
      currentApp: 'com.android.chrome',
      screenOn: null,
    });
  });
});

describe('confirmation side and the phone decision', () => {
  it('the relay asks only a phone that says it answers bridge.confirm', () => {
    expect(confirmationSide({ typed_stream_events: true, event_schema_version: 1 })).toBe('phone');
    expect(confirmationSide(undefined)).toBe('phone');
    expect(confirmationSide({ bridge_confirm: 'yes' })).toBe('phone');
    expect(confirmationSide({ bridge_confirm: true })).toBe('relay');
  });

  it("the idle expiry is the phone's unless it says it honours bridge.master_disabled (AuthManager.kt:820-825 does not)", () => {
    expect(autoDisableSide({ typed_stream_events: true, event_schema_version: 1 })).toBe('phone');
    expect(autoDisableSide(undefined)).toBe('phone');
    expect(autoDisableSide({ bridge_master_disabled: 1 })).toBe('phone');
    expect(autoDisableSide({ bridge_confirm: true })).toBe('phone');
    expect(autoDisableSide({ bridge_master_disabled: true })).toBe('relay');
  });

  it('2xx allowed, 403 user_denied denied, anything else not asked', () => {
    expect(phoneDecision(200, {})).toBe('allowed');
    expect(phoneDecision(403, { error_code: 'user_denied' })).toBe('denied');
    expect(phoneDecision(403, { error_code: 'bridge_disabled' })).toBe('not_asked');
    expect(phoneDecision(500, {})).toBe('not_asked');
  });
});

const SVC = clientNames('svc');

describe('toPhoneCommand', () => {
  const screen = { width: 1000, height: 2000 };
  it('sends a GET query in body and params', () => {
    expect(toPhoneCommand('/events', 'GET', { limit: 5 }, {}, screen, SVC)).toEqual({
      method: 'GET',
      path: '/events',
      params: { limit: 5 },
      body: { limit: 5 },
    });
  });
  it('translates /wait, /swipe, /return_to_svc and keeps what the caller sent', () => {
    expect(toPhoneCommand('/wait', 'POST', {}, { timeoutMs: 300, text: 'x' }, screen, SVC).body).toEqual({ timeoutMs: 300, ms: 300, text: 'x' });
    expect(toPhoneCommand('/swipe', 'POST', {}, { direction: 'down', distance: 'short' }, screen, SVC).body).toEqual({
      direction: 'down',
      distance: 'short',
      start_x: 500,
      start_y: 750,
      end_x: 500,
      end_y: 1250,
    });
    expect(toPhoneCommand('/swipe', 'POST', {}, { start_x: 1, start_y: 2, end_x: 3, end_y: 4 }, screen, SVC).body).toEqual({
      start_x: 1,
      start_y: 2,
      end_x: 3,
      end_y: 4,
    });
    expect(toPhoneCommand('/return_to_svc', 'GET', {}, {}, screen, SVC)).toMatchObject({ method: 'POST', path: '/return_to_svc' });
    expect(toPhoneCommand('/return_to_svc', 'GET', {}, {}, screen, clientNames('hermes'))).toMatchObject({
      method: 'POST',
      path: '/return_to_hermes',
    });
    expect(toPhoneCommand('/return_to_hermes', 'POST', {}, {}, screen, clientNames('hermes'))).toMatchObject({ path: '/return_to_hermes' });
  });
  it('asks /screen with bounds (the app lists no node without them) and drops them for a caller who asked none', () => {
    expect(toPhoneCommand('/screen', 'GET', { include_bounds: false }, {}, screen, SVC)).toMatchObject({
      params: { include_bounds: false },
      body: { include_bounds: true },
    });
    expect(toPhoneCommand('/screen', 'GET', {}, {}, screen, SVC).body).toEqual({});
    const answer = {
      packageName: 'p',
      rootBounds: { left: 0, top: 0, right: 10, bottom: 10 },
      nodes: [{ nodeId: 'w0:0', bounds: { left: 1, top: 2, right: 3, bottom: 4 } }, 'junk'],
    };
    expect(screenAsAsked({ include_bounds: false }, answer)).toEqual({
      ...answer,
      nodes: [{ nodeId: 'w0:0' }, 'junk'],
    });
    expect(screenAsAsked({ include_bounds: true }, answer)).toBe(answer);
    expect(screenAsAsked({}, answer)).toBe(answer);
    expect(screenAsAsked({ include_bounds: false }, { error: 'no active window available' })).toEqual({ error: 'no active window available' });
  });

  it('a swipe stays on the screen whatever the distance', () => {
    const c = swipeCoordinates('right', 99_999, screen);
    expect(c.start_x).toBeGreaterThanOrEqual(0);
    expect(c.end_x).toBeLessThanOrEqual(1000);
  });
  it('learns the screen from rootBounds', () => {
    expect(screenSizeShown({ rootBounds: { left: 0, top: 0, right: 1080, bottom: 2340 } })).toEqual({ width: 1080, height: 2340 });
    expect(screenSizeShown({ rootBounds: { left: 0, top: 0, right: 'x', bottom: 2 } })).toBeNull();
  });
});

describe('mediaTokenOf', () => {
  it('accepts both schemes, with or without MEDIA:, and bare tokens', () => {
    for (const m of ['MEDIA:svc-relay://abcdefgh_1', 'MEDIA:hermes-relay://abcdefgh_1', 'hermes-relay://abcdefgh_1', 'abcdefgh_1']) {
      expect(mediaTokenOf(m)).toBe('abcdefgh_1');
    }
    for (const m of ['MEDIA:/tmp/x.png', 'MEDIA:file:///x', 'MEDIA:other://abcdefgh', 'short', 'MEDIA:svc-relay://../../etc']) {
      expect(mediaTokenOf(m)).toBeNull();
    }
  });
});
