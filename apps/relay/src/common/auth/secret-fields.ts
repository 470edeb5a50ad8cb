/**
 * Field names whose values are secrets wherever they sit: the one list behind the log's redaction
 * (logger.ts) and the console's (console-redaction.ts). Written snake_case; each consumer says which
 * other spellings it reads. Two names are decided per consumer, not here: `key` (a notification's `key`
 * is Android's id for it, which the console shows; the log redacts it) and `code` (an error code or a
 * close code as often as a pairing code).
 */
export const SECRET_FIELDS = [
  'token',
  'session_token',
  'refresh_token',
  'refresh_digest',
  'pairing_code',
  'api_key',
  'secret',
  'secret_key',
  'private_key',
  'password',
  'passphrase',
  'bearer',
  'authorization',
  'cookie',
  'operator_key',
  'ticket',
] as const;

/** A test for `names` in any case, each underscore optional (`session_token`, `sessionToken`, `SESSIONTOKEN`). */
export function fieldNamePattern(names: readonly string[]): RegExp {
  return new RegExp(`^(?:${names.map((n) => n.split('_').join('_?')).join('|')})$`, 'i');
}
