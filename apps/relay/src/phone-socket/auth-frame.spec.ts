import { clientSupports, deviceInfo, pairingChoices, refreshTokenOf, sentDeviceFields } from './auth-frame';

describe('the system/auth readers', () => {
  it('device fields: cleaned and cut, the hostname names an unnamed phone, a wrong type is an error', () => {
    expect(deviceInfo({ device_name: ' Pixel\u0007 ', device_hostname: 'host', client_surface: 'APP' })).toEqual({
      deviceId: '',
      deviceName: 'Pixel',
      deviceModel: null,
      devicePlatform: null,
      deviceHostname: 'host',
      clientSurface: 'app',
      deviceFormFactor: null,
    });
    expect(deviceInfo({ device_hostname: 'laptop' })).toMatchObject({ deviceName: 'laptop' });
    expect(deviceInfo({})).toMatchObject({ deviceName: 'Phone' });
    expect(deviceInfo({ device_name: 'x'.repeat(100) })).toMatchObject({ deviceName: 'x'.repeat(64) });
    expect(deviceInfo({ device_model: 7 })).toBe('device_model must be a string');
  });

  it('a reconnect keeps only the fields the client sent', () => {
    const p = { device_model: 'P9', device_platform: null };
    expect(sentDeviceFields(p, deviceInfo(p) as Exclude<ReturnType<typeof deviceInfo>, string>)).toEqual({ deviceModel: 'P9', devicePlatform: null });
  });

  it('refresh_token: empty is none, another type is an error', () => {
    expect(refreshTokenOf({})).toEqual({ token: null });
    expect(refreshTokenOf({ refresh_token: '' })).toEqual({ token: null });
    expect(refreshTokenOf({ refresh_token: 'r1' })).toEqual({ token: 'r1' });
    expect(refreshTokenOf({ refresh_token: 5 })).toBe('refresh_token must be a string');
  });

  it('pairing choices: 0 or past ten years is never, a bad number or too many channels is an error', () => {
    expect(pairingChoices({ ttl_seconds: 0, grants: { chat: 60, terminal: null } })).toEqual({
      ttlSeconds: null,
      grants: { chat: 60, terminal: null },
    });
    expect(pairingChoices({ ttl_seconds: 400_000_000 })).toEqual({ ttlSeconds: null });
    expect(pairingChoices({ ttl_seconds: -1 })).toBe('ttl_seconds must be a whole number of seconds >= 0 (0: never)');
    expect(pairingChoices({ grants: [] })).toBe('grants must be an object of channel -> seconds');
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`c${i}`, 1]));
    expect(pairingChoices({ grants: many })).toBe('grants: at most 32 channels');
  });

  it('supports: flags of a known shape kept (32 at most), the rest dropped, not an object is an error', () => {
    expect(clientSupports({ supports: { a: true, 'b.c': 2, 'bad key': true, d: 'x'.repeat(65), e: {} } })).toEqual({ a: true, 'b.c': 2 });
    expect(Object.keys(clientSupports({ supports: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, true])) }))).toHaveLength(32);
    expect(clientSupports({ supports: 'all' })).toBe('supports must be an object');
    expect(clientSupports({})).toEqual({});
  });
});
