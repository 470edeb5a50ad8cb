import { checkLoopback, hasProxyHeader, isLoopbackHostHeader, isLoopbackPeer, isOwnLoopbackOrigin, normalizeIp } from './net';

import type { IncomingMessage } from 'node:http';

const H = (extra: Record<string, string> = {}) => ({ host: '127.0.0.1:8767', ...extra });

/** A request as Node hands it over: headers lower-cased, rawHeaders as sent, the target as written. */
function req(peer: string | undefined, headers: Record<string, string>, opts: { url?: string; rawHeaders?: string[] } = {}): IncomingMessage {
  return {
    socket: { remoteAddress: peer },
    headers,
    url: opts.url ?? '/x',
    rawHeaders: opts.rawHeaders ?? Object.entries(headers).flat(),
  } as unknown as IncomingMessage;
}

describe('loopback rules (ARCHITECTURE.md)', () => {
  it.each(['127.0.0.1', '::1', '::ffff:127.0.0.1'])('peer %s is loopback', (peer) => {
    expect(isLoopbackPeer(peer)).toBe(true);
    expect(checkLoopback(req(peer, H()), 8767)).toEqual({ ok: true });
  });

  it.each([undefined, '127.0.0.2', '10.0.0.9', '::ffff:10.0.0.9', '0.0.0.0', '::', 'fe80::1', 'localhost'])('peer %p is not', (peer) => {
    expect(isLoopbackPeer(peer)).toBe(false);
    expect(checkLoopback(req(peer, H()), 8767)).toMatchObject({ ok: false, reason: expect.stringContaining('loopback') });
  });

  it.each(['x-forwarded-for', 'forwarded', 'x-real-ip', 'x-forwarded-host', 'x-forwarded-proto'])('a %s header turns loopback away', (h) => {
    expect(hasProxyHeader({ [h]: '' })).toBe(true);
    expect(checkLoopback(req('127.0.0.1', H({ [h]: '1.2.3.4' })), 8767)).toMatchObject({ ok: false, reason: expect.stringContaining('proxied') });
  });

  it.each(['127.0.0.1', '127.0.0.1:1', 'localhost', 'LOCALHOST:8767', '[::1]', '[::1]:8767'])('Host %s is a loopback host', (host) => {
    expect(isLoopbackHostHeader(host)).toBe(true);
  });

  it.each([undefined, '', 'evil.com', 'localhost.evil.com', '127.0.0.1.nip.io', '127.0.0.2', '::1', '[::1]x', 'localhost:99999999', '0x7f000001'])(
    'Host %p is not',
    (host) => {
      expect(isLoopbackHostHeader(host)).toBe(false);
      expect(checkLoopback(req('127.0.0.1', host === undefined ? {} : { host }), 8767).ok).toBe(false);
    },
  );

  it('an Origin must be absent or the relay’s own loopback origin on its port', () => {
    expect(isOwnLoopbackOrigin(undefined, 8767)).toBe(true);
    expect(isOwnLoopbackOrigin('http://127.0.0.1:8767', 8767)).toBe(true);
    expect(isOwnLoopbackOrigin('http://localhost:8767', 8767)).toBe(true);
    expect(isOwnLoopbackOrigin('https://[::1]:8767', 8767)).toBe(true);
    expect(isOwnLoopbackOrigin('http://127.0.0.1', 80)).toBe(true);
    for (const bad of [
      'http://127.0.0.1:9119',
      'http://evil.com:8767',
      'null',
      'file:///',
      'chrome-extension://abc',
      'ws://127.0.0.1:8767',
      'not a url',
    ]) {
      expect({ bad, ok: isOwnLoopbackOrigin(bad, 8767) }).toEqual({ bad, ok: false });
    }
    expect(checkLoopback(req('127.0.0.1', H({ origin: 'http://evil.com' })), 8767)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('cross-origin'),
    });
  });

  it('an absolute-form target (what a forward proxy sends) is not a loopback request', () => {
    expect(checkLoopback(req('127.0.0.1', H(), { url: 'http://evil.example/x' }), 8767)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('absolute'),
    });
    expect(checkLoopback(req('127.0.0.1', H(), { url: '*' }), 8767).ok).toBe(false);
  });

  it('two Host headers are refused, even when both are loopback', () => {
    const two = req('127.0.0.1', H(), { rawHeaders: ['Host', '127.0.0.1:8767', 'host', 'evil.example'] });
    expect(checkLoopback(two, 8767)).toMatchObject({ ok: false, reason: expect.stringContaining('one Host') });
  });

  it('what a browser says of another site refuses: Sec-Fetch-Site cross-site, a foreign Referer', () => {
    expect(checkLoopback(req('127.0.0.1', H({ 'sec-fetch-site': 'cross-site' })), 8767).ok).toBe(false);
    for (const site of ['same-origin', 'same-site', 'none'])
      expect(checkLoopback(req('127.0.0.1', H({ 'sec-fetch-site': site })), 8767).ok).toBe(true);
    for (const referer of ['http://evil.example/page', 'http://127.0.0.1:9119/', 'not a url'])
      expect({ referer, ok: checkLoopback(req('127.0.0.1', H({ referer })), 8767).ok }).toEqual({ referer, ok: false });
    expect(checkLoopback(req('127.0.0.1', H({ referer: 'http://127.0.0.1:8767/console/devices' })), 8767).ok).toBe(true);
    expect(checkLoopback(req('127.0.0.1', H({ referer: 'http://localhost:8767/console/' })), 8767).ok).toBe(true);
  });

  it('normalizeIp shows IPv4-mapped IPv6 as IPv4', () => {
    expect(normalizeIp('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(normalizeIp('::1')).toBe('::1');
    expect(normalizeIp(undefined)).toBe('unknown');
  });
});
