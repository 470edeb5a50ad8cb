import { DomainError } from '../errors';
import { CODE_ALPHABET, CODE_LENGTH, CODE_TTL_SECONDS, codeFromBytes, normalizeCode, requireCode } from './pairing-code';

describe('pairing codes', () => {
  // Wire pins: spec 2.1 "6 characters, each from A-Z or 0-9 (36-character alphabet; no ambiguous-character
  // exclusion)", "expires 10 minutes after registration"; spec 8 "6 characters, A-Z0-9, 10 minutes, one-shot".
  it('use the spec alphabet: A-Z0-9, 36 characters, no exclusions, 6 long, 10 minutes', () => {
    expect(CODE_ALPHABET).toBe('ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
    expect(new Set(CODE_ALPHABET).size).toBe(36);
    expect(CODE_LENGTH).toBe(6);
    expect(CODE_TTL_SECONDS).toBe(600);
  });

  it('normalize what people type: case and surrounding spaces, nothing else', () => {
    expect(normalizeCode('abc123')).toBe('ABC123');
    expect(normalizeCode('  Ab1C2d \n')).toBe('AB1C2D');
    for (const bad of ['ABC12', 'ABC1234', 'AB C12', 'AB-123', 'ÄBC123', '', 123456, null, undefined, {}, ['ABC123']]) {
      expect(normalizeCode(bad)).toBeNull();
    }
  });

  it('requireCode throws a 400-kind DomainError naming the field', () => {
    expect(requireCode(' zz99aa ')).toBe('ZZ99AA');
    try {
      requireCode('nope', 'pairing_code');
      fail('should throw');
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect(e).toMatchObject({ code: 'validation.code', kind: 'invalid' });
      expect((e as Error).message).toMatch(/^pairing_code:/);
    }
  });

  it('maps bytes to characters and skips bytes >= 252 (no modulo bias)', () => {
    expect(codeFromBytes(Uint8Array.from([0, 1, 25, 26, 35, 36]))).toBe('ABZ09A');
    expect(codeFromBytes(Uint8Array.from([252, 253, 254, 255, 0, 1, 2, 3, 4, 5]))).toBe('ABCDEF');
    expect(codeFromBytes(Uint8Array.from([251, 251, 251, 251, 251, 251]))).toBe('999999'); // 251 % 36 = 35
  });

  it('every character is exactly equally likely over the full byte range', () => {
    const counts = new Map<string, number>();
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    // Take one character per byte value by placing that byte first and filler after it.
    for (const b of bytes) {
      if (b >= 252) {
        expect(codeFromBytes(Uint8Array.from([b, 0, 0, 0, 0, 0, 0]))).toBe('AAAAAA');
        continue;
      }
      const ch = codeFromBytes(Uint8Array.from([b, 0, 0, 0, 0, 0]))[0];
      counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    expect(counts.size).toBe(36);
    expect(new Set(counts.values())).toEqual(new Set([7]));
  });

  it('throws when the bytes run out instead of returning a short code', () => {
    expect(() => codeFromBytes(Uint8Array.from([0, 1, 2, 255, 255]))).toThrow(/not enough random bytes/);
  });
});
