import { clientNames } from '@svc/domain';
import { createHmac } from 'node:crypto';
import { canonicalJson, decodePairing, pairingUrl } from './qr-payload';

describe('the pairing QR payload', () => {
  // Fixture: plugin/relay/qr_sign.py canonicalize() and sign_payload(payload, b"k" * 32), run with the
  // reference's Python on this payload (json.dumps sort_keys, compact separators, ensure_ascii).
  const payload = {
    svc: 3,
    host: '192.168.1.50',
    port: 8642,
    key: '',
    tls: false,
    relay: { url: 'ws://192.168.1.50:8767', code: 'ABC123', grants: { terminal: 86400, chat: 0 } },
    endpoints: [
      { role: 'tailscale', priority: 1, api: { host: 'café.ts.net', port: 8642, tls: true } },
      { role: 'lan', priority: 0 },
    ],
    sig: 'ignored',
  };
  const PYTHON_CANONICAL =
    '{"endpoints":[{"api":{"host":"caf\\u00e9.ts.net","port":8642,"tls":true},"priority":1,"role":"tailscale"},{"priority":0,"role":"lan"}],' +
    '"host":"192.168.1.50","key":"","port":8642,"relay":{"code":"ABC123","grants":{"chat":0,"terminal":86400},"url":"ws://192.168.1.50:8767"},"svc":3,"tls":false}';

  it('canonical JSON is byte for byte what the reference signs: sorted keys, arrays in order, ASCII escapes, no top-level sig', () => {
    expect(canonicalJson(payload)).toBe(PYTHON_CANONICAL);
    expect(createHmac('sha256', Buffer.alloc(32, 'k')).update(canonicalJson(payload)).digest('base64')).toBe(
      '5RXG7gtSl8VvMR5sTsNY0d/rWuzT2XqV8S5TQpCljbk=',
    );
    // Only the top-level sig is left out (as qr_sign.canonicalize does).
    expect(canonicalJson({ a: { sig: 1 } })).toBe('{"a":{"sig":1}}');
  });

  it('reads the JSON itself, svc-relay:// and hermes-relay:// invites (base64url or base64, padded or not, payload= or p=)', () => {
    const json = JSON.stringify(payload);
    const url = pairingUrl(json, clientNames('hermes'));
    expect(url).toMatch(/^hermes-relay:\/\/pair\?payload=[A-Za-z0-9_-]+$/);
    expect(pairingUrl(json, clientNames('svc'))).toMatch(/^svc-relay:\/\/pair\?payload=[A-Za-z0-9_-]+$/);
    const b64 = Buffer.from(json).toString('base64');
    for (const raw of [
      json,
      ` ${json}\n`,
      url,
      url.replace('hermes-relay', 'svc-relay'),
      `hermes-relay://pair?p=${b64}`,
      `HERMES-RELAY://pair/?payload=${b64}`,
    ]) {
      expect(decodePairing(raw)).toEqual(payload);
    }
    for (const bad of ['https://example.com/pair?payload=e30', 'svc-relay://pair', 'hermes-relay://pair?payload=WzFd', '[1]', 'not json']) {
      expect(() => decodePairing(bad)).toThrow();
    }
  });
});
