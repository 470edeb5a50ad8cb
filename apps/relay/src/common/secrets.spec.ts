import { newSessionToken, secureRandomBytes } from './secrets';

describe('secureRandomBytes', () => {
  it('hands out each pooled byte once, across pool refills', () => {
    const seen = new Set<string>();
    // 3,000 draws of 16 bytes span about twelve 4 KiB pools; any reuse would repeat a value.
    for (let i = 0; i < 3000; i++) {
      const b = secureRandomBytes(16);
      expect(b).toHaveLength(16);
      seen.add(b.toString('hex'));
    }
    expect(seen.size).toBe(3000);
  });

  it('returns a copy that later draws do not change', () => {
    const a = secureRandomBytes(32);
    const before = a.toString('hex');
    for (let i = 0; i < 300; i++) secureRandomBytes(32);
    expect(a.toString('hex')).toBe(before);
    expect(before).not.toBe('0'.repeat(64));
  });

  it('serves requests larger than the pool directly', () => {
    expect(secureRandomBytes(10_000)).toHaveLength(10_000);
  });

  it('makes 43-character base64url session tokens', () => {
    const t = newSessionToken();
    expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newSessionToken()).not.toBe(t);
  });
});
