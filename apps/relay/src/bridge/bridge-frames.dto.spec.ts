import 'reflect-metadata';
import { bridgeStatusOf } from '@svc/domain';
import { parseFrame } from '../common/sockets/parse-frame';
import { BridgeStatusFrame, ConfirmResultFrame } from './bridge-frames.dto';

/** The refusal of a frame: its code and message, as the phone's `bridge.error` carries them. */
const refusal = (dto: new () => object, payload: unknown) => {
  const r = parseFrame(dto, payload);
  return r.ok ? null : { code: r.error.code, message: r.error.message };
};
const status = (payload: object) => {
  const r = parseFrame(BridgeStatusFrame, payload);
  return r.ok ? bridgeStatusOf(r.value) : r.error.message;
};

describe('bridge frames', () => {
  it('bridge.status: each refusal is bad_frame naming the field, in the words the app has always had', () => {
    const bad = (message: string) => ({ code: 'bad_frame', message: `bridge.status: ${message}` });
    expect(refusal(BridgeStatusFrame, { bridge: 'on' })).toEqual(bad('bridge must be an object'));
    expect(refusal(BridgeStatusFrame, { safety: [] })).toEqual(bad('safety must be an object'));
    expect(refusal(BridgeStatusFrame, { device: 1 })).toEqual(bad('device must be an object'));
    expect(refusal(BridgeStatusFrame, { master_enabled: 'yes' })).toEqual(bad('master_enabled must be a boolean'));
    expect(refusal(BridgeStatusFrame, { bridge: { accessibility_granted: 1 } })).toEqual(bad('accessibility_enabled must be a boolean'));
    expect(refusal(BridgeStatusFrame, { device: { screen_on: 'on' } })).toEqual(bad('screen_on must be a boolean'));
    expect(refusal(BridgeStatusFrame, { bridge: { device_control_supported: 1 } })).toEqual(bad('device_control_supported must be a boolean'));
    expect(refusal(BridgeStatusFrame, { device: { battery_percent: 'full' } })).toEqual(bad('battery must be a number (0-100; -1: unknown)'));
    expect(refusal(BridgeStatusFrame, { current_app: 7 })).toEqual(bad('current_app must be a package id string'));
    expect(refusal(BridgeStatusFrame, { trusted_destructive_verbs: 'send' })).toEqual(
      bad('trusted_destructive_verbs must be an array of at most 64 verb strings'),
    );
    expect(refusal(BridgeStatusFrame, { safety: { auto_disable_minutes: 5000 } })).toEqual(
      bad('auto_disable_minutes must be a number 0-1440 (0: never)'),
    );
  });

  it('bridge.status: a nested value wins over a flat one (a bad flat one beside a good nested one passes); the flat shape alone works', () => {
    expect(status({ master_enabled: 'yes', bridge: { master_enabled: false } })).toMatchObject({ masterEnabled: false });
    expect(status({ master_enabled: true, device_control_supported: true, battery: 55, current_app: 'com.android.chrome' })).toEqual({
      screenOn: null,
      battery: 55,
      currentApp: 'com.android.chrome',
      accessibilityEnabled: null,
      masterEnabled: true,
      deviceControlSupported: true,
      trustedVerbs: [],
      autoDisableMinutes: null,
    });
    expect(
      status({
        device: { battery_percent: -1, current_app: 'unknown', screen_on: false },
        bridge: { master_enabled: true, device_control_supported: true, accessibility_granted: false },
        safety: { auto_disable_minutes: 15, trusted_destructive_verbs: ['send'] },
        battery: 80,
        some_new_field: { x: 1 },
      }),
    ).toEqual({
      screenOn: false,
      battery: null,
      currentApp: null,
      accessibilityEnabled: false,
      masterEnabled: true,
      deviceControlSupported: true,
      trustedVerbs: ['send'],
      autoDisableMinutes: 15,
    });
  });

  it('bridge.confirm.result: request_id (string) and allow (boolean), one message however many are wrong', () => {
    const bad = { code: 'bad_frame', message: 'bridge.confirm.result needs request_id (string) and allow (boolean)' };
    expect(refusal(ConfirmResultFrame, {})).toEqual(bad);
    expect(refusal(ConfirmResultFrame, { request_id: 'r1', allow: 'yes' })).toEqual(bad);
    expect(refusal(ConfirmResultFrame, { request_id: 1, allow: true })).toEqual(bad);
    expect(parseFrame(ConfirmResultFrame, { request_id: 'r1', allow: false })).toMatchObject({ ok: true, value: { request_id: 'r1', allow: false } });
  });
});
