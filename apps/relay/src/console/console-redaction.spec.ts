import { storedEvent as ev } from '../../../../test/support/stored-event';
import { redact, toConsoleEvent } from './console-redaction';

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
