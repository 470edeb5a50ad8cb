import { clientNames } from '../spelling';
import { confirmationSide, mediaTokenOf, parseBridgeStatus, phoneDecision, screenSizeShown, swipeCoordinates, toPhoneCommand } from './app-wire';

describe('parseBridgeStatus', () => {
  it('reads the nested shape and treats -1 / "unknown" as not known', () => {
    const r = parseBridgeStatus(
      {
        device: { battery_percent: -1, current_app: 'unknown', screen_on: false },
        bridge: { master_enabled: true, device_control_supported: true, accessibility_granted: false },
        safety: { auto_disable_minutes: 15 },
        battery: -1,
        current_app: 'unknown',
      },
      1440,
    );
    expect(r).toEqual({
      ok: true,
      value: {
        screenOn: false,
        battery: null,
        currentApp: null,
        accessibilityEnabled: false,
        masterEnabled: true,
        deviceControlSupported: true,
        trustedVerbs: [],
        autoDisableMinutes: 15,
      },
    });
  });

  it('prefers nested over flat, keeps the flat shape, names the bad field', () => {
    const nested = parseBridgeStatus({ master_enabled: true, bridge: { master_enabled: false } }, 1440);
    expect(nested.ok && nested.value.masterEnabled).toBe(false);
    const flat = parseBridgeStatus({ master_enabled: true, device_control_supported: true, battery: 40.4 }, 1440);
    expect(flat.ok && [flat.value.masterEnabled, flat.value.battery]).toEqual([true, 40]);
    expect(parseBridgeStatus({ bridge: [] }, 1440)).toEqual({ ok: false, field: 'bridge', what: 'an object' });
    expect(parseBridgeStatus({ bridge: { device_control_supported: 1 } }, 1440)).toMatchObject({ ok: false, field: 'device_control_supported' });
    expect(parseBridgeStatus({ battery: 'full' }, 1440)).toMatchObject({ ok: false, field: 'battery' });
    expect(parseBridgeStatus({ safety: { auto_disable_minutes: 5000 } }, 1440)).toMatchObject({ ok: false, field: 'auto_disable_minutes' });
  });
});

describe('confirmation side and the phone decision', () => {
  it('the relay asks only a phone that says it answers bridge.confirm', () => {
    expect(confirmationSide({ typed_stream_events: true, event_schema_version: 1 })).toBe('phone');
    expect(confirmationSide(undefined)).toBe('phone');
    expect(confirmationSide({ bridge_confirm: 'yes' })).toBe('phone');
    expect(confirmationSide({ bridge_confirm: true })).toBe('relay');
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
