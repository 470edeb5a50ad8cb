import { DomainError } from '../errors';

export const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
export const CODE_LENGTH = 6;
export const CODE_TTL_SECONDS = 10 * 60;

const CODE_RE = /^[A-Z0-9]{6}$/;

/** Codes are typed by people: accept lower case and surrounding spaces, nothing else. */
export function normalizeCode(input: unknown): string | null {
  if (typeof input !== 'string') return null;
  const code = input.trim().toUpperCase();
  return CODE_RE.test(code) ? code : null;
}

export function requireCode(input: unknown, field = 'code'): string {
  const code = normalizeCode(input);
  if (!code) throw new DomainError('validation.code', 'invalid', `${field}: must be 6 characters from A-Z and 0-9`);
  return code;
}

/**
 * A code from random bytes, without modulo bias (bytes >= 252 are skipped; pass a few spare).
 * Randomness comes from the caller so the rule stays pure.
 */
export function codeFromBytes(bytes: Uint8Array): string {
  let code = '';
  for (const b of bytes) {
    if (b >= 252) continue;
    code += CODE_ALPHABET[b % 36];
    if (code.length === CODE_LENGTH) return code;
  }
  throw new Error('not enough random bytes for a pairing code');
}
