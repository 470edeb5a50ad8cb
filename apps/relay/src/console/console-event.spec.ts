import type { StoredRelayEvent } from '@svc/events';
import { matches, parseTypes, redact, toConsoleEvent } from './console-event';

const ev = (type: string, data: Record<string, unknown>, actor = 'system'): StoredRelayEvent =>
  ({
    seq: 7,
    id: 'id-7',
    at: '2026-03-01T12:00:00.000Z',
    type,
    actor,
    data,
    v: 1,
    prev: '0'.repeat(64),
    hash: 'a'.repeat(64),
  }) as unknown as StoredRelayEvent;

describe('console event redaction', () => {
  it('cuts digests to 8 characters and withholds secret-named strings, at any depth', () => {
    const out = redact({
      tokenDigest: 'AbCdEfGh12345678901234567890',
      tokenPrefix: 'AbCdEfGh',
      nested: [{ codeDigest: 'ZZZZZZZZyyyyyyyy', api_key: 'sk-live-123', session_token: 'tok' }],
      code: 'ABC123',
      password: { any: 'thing' },
    });
    expect(out).toEqual({
      tokenDigest: 'AbCdEfGh…',
      tokenPrefix: 'AbCdEfGh',
      nested: [{ codeDigest: 'ZZZZZZZZ…', api_key: '[redacted]', session_token: '[redacted]' }],
      code: '[redacted]',
      password: '[redacted]',
    });
  });

  it('keeps a notification key (not a credential)', () => {
    expect(redact({ tokenPrefix: 'abcdefgh', key: '0|com.chat|42|null|10123' })).toEqual({
      tokenPrefix: 'abcdefgh',
      key: '0|com.chat|42|null|10123',
    });
  });

  it('keeps numbers (a close `code`) and leaves the stored event untouched', () => {
    const e = ev('phone.disconnected', { tokenPrefix: 'abcdefgh', code: 4403, reason: 'session revoked' });
    const c = toConsoleEvent(e);
    expect(c.data).toEqual({ tokenPrefix: 'abcdefgh', code: 4403, reason: 'session revoked' });
    expect(c.hash).toBe('a'.repeat(12));
    const created = ev('session.created', { tokenDigest: 'x'.repeat(43) });
    toConsoleEvent(created);
    expect((created.data as { tokenDigest: string }).tokenDigest).toBe('x'.repeat(43));
  });
});

describe('console event filters', () => {
  it('types: exact, prefix with a dot or a star, a family name', () => {
    const e = ev('session.revoked', { tokenPrefix: 'abcdefgh' });
    expect(matches(e, { types: parseTypes('session.') })).toBe(true);
    expect(matches(e, { types: parseTypes('session.*') })).toBe(true);
    expect(matches(e, { types: parseTypes('session') })).toBe(true);
    expect(matches(e, { types: parseTypes('session.revoked') })).toBe(true);
    expect(matches(e, { types: parseTypes('session.rev') })).toBe(false);
    expect(matches(e, { types: parseTypes('pairing.,phone.') })).toBe(false);
    expect(parseTypes(' , ')).toBeUndefined();
  });

  it('device: token prefix in data or actor, or an exact device id; time bounds inclusive', () => {
    expect(matches(ev('session.seen', { tokenPrefix: 'abcdefgh' }), { device: 'abcd' })).toBe(true);
    expect(matches(ev('phone.message', {}, 'device:abcdefgh'), { device: 'abcdefgh' })).toBe(true);
    expect(matches(ev('pairing.code_consumed', { deviceId: 'pixel-1', tokenPrefix: 'zzzzzzzz' }), { device: 'pixel-1' })).toBe(true);
    expect(matches(ev('pairing.code_consumed', { deviceId: 'pixel-10' }), { device: 'pixel-1' })).toBe(false);
    const t = Date.parse('2026-03-01T12:00:00.000Z');
    expect(matches(ev('relay.started', {}), { since: t, until: t })).toBe(true);
    expect(matches(ev('relay.started', {}), { since: t + 1 })).toBe(false);
  });
});
