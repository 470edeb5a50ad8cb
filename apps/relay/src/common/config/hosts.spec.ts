import { loadConfig } from './config';
import { advertisedHost, dialAddress, dialHost, isBindAll, isLoopbackHost, urlHost } from './hosts';

describe('hosts: one rule for bind-all, loopback and the address to dial', () => {
  it('bind-all: 0.0.0.0, :: and [::] (and an empty host)', () => {
    expect(['0.0.0.0', '::', '[::]', ''].map(isBindAll)).toEqual([true, true, true, true]);
    expect(['127.0.0.1', '::1', 'example.com', '0.0.0.1'].map(isBindAll)).toEqual([false, false, false, false]);
  });

  it('loopback: localhost in any case, 127.0.0.0/8, ::1 bracketed or not', () => {
    expect(['localhost', 'LocalHost', '127.0.0.1', '127.1.2.3', '::1', '[::1]'].map(isLoopbackHost)).toEqual([true, true, true, true, true, true]);
    expect(['0.0.0.0', '::', '128.0.0.1', 'localhost.example.com', '127.0.0.1.nip.io', '::2'].map(isLoopbackHost)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('a bind-all address is dialled as 127.0.0.1; IPv6 literals are bracketed in a URL and bare for a socket', () => {
    expect(['0.0.0.0', '::', '[::]', '127.0.0.1', '::1', '[::1]', 'fe80::1', 'relay.lan'].map(dialHost)).toEqual([
      '127.0.0.1',
      '127.0.0.1',
      '127.0.0.1',
      '127.0.0.1',
      '[::1]',
      '[::1]',
      '[fe80::1]',
      'relay.lan',
    ]);
    expect(['::', '[::1]', '::1', 'relay.lan'].map(dialAddress)).toEqual(['127.0.0.1', '::1', '::1', 'relay.lan']);
    expect(urlHost('[::1]')).toBe('[::1]');
  });

  it('phones are told the bind host, or for bind-all a LAN address (else 127.0.0.1)', () => {
    expect(advertisedHost('relay.lan')).toBe('relay.lan');
    expect(advertisedHost('::1')).toBe('::1');
    expect(advertisedHost('0.0.0.0')).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });

  it.each([
    ['::', 'http://127.0.0.1:8642'],
    ['0.0.0.0', 'http://127.0.0.1:8642'],
    ['::1', 'http://[::1]:8642'],
    ['10.0.0.5', 'http://10.0.0.5:8642'],
  ])('API_SERVER_HOST=%s gives the API server URL %s (a URL new URL accepts)', (host, url) => {
    const config = loadConfig({ SVC_HOME: '/srv/svc', API_SERVER_HOST: host });
    expect(config.apiServer.url).toBe(url);
    expect(new URL(config.apiServer.url).port).toBe('8642');
  });
});
