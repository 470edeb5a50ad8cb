import type { BridgeEvent, NewEvent, PersonalDataForgotten, SecretSet } from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';

/*
 * Named secrets (issue 40, item 3): the operator registers a value under a name, an agent types it by name
 * (MCP android_type_secret) and never sees it. The value is sealed in the log like personal content, under
 * data keys owned by `secret-<name>`, so forgetting destroys those keys and nothing else.
 */

/** A name: letters, digits, `_` and `-`, at most this long (so `secret-<name>` fits a data key's owner). */
export const SECRET_NAME_MAX = 40;
/** A value: at most this many characters (a password, a PIN, a recovery phrase), none of them control characters. */
export const SECRET_VALUE_MAX = 1024;
/** The data key owner of a secret's value: `secret-<name>` (personal-data.ts key ids). */
export const SECRET_KEY_OWNER_PREFIX = 'secret-';
/** What a confirmation question, an event and a scrubbed answer say in place of the value. */
export const secretLabel = (name: string): string => `the secret "${name}"`;
/** The verb a secret's confirmation is recorded and asked under: never a word of the value. */
export const SECRET_VERB = 'type_secret';

const NAME_CHAR = /^[A-Za-z0-9_-]+$/;

export function checkSecretName(name: unknown): string {
  // Length first: the pattern then runs over at most 40 characters (and has no backtracking either way).
  if (typeof name !== 'string' || name.length === 0 || name.length > SECRET_NAME_MAX || !NAME_CHAR.test(name))
    throw new DomainError('secrets.bad_name', 'invalid', `a secret's name is 1 to ${SECRET_NAME_MAX} letters, digits, _ or -`);
  return name;
}

export function checkSecretValue(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > SECRET_VALUE_MAX)
    throw new DomainError('secrets.bad_value', 'invalid', `a secret's value is 1 to ${SECRET_VALUE_MAX} characters`);
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f)
      throw new DomainError('secrets.bad_value', 'invalid', "a secret's value holds no control characters (newlines included)");
  }
  return value;
}

export const secretKeyOwner = (name: string): string => SECRET_KEY_OWNER_PREFIX + name;

/** Whether a data key id (`<owner>:<hour>:<random>`) is a secret's: personal forgetting by device or time leaves those alone. */
export const isSecretKey = (id: string): boolean => id.startsWith(SECRET_KEY_OWNER_PREFIX);

/** The data keys of one secret among `ids`. */
export function keysOfSecret(ids: readonly string[], name: string): string[] {
  const owner = `${secretKeyOwner(name)}:`;
  return ids.filter((id) => id.startsWith(owner)).sort();
}

/**
 * Registers or replaces a secret: `secret.set` (sealed under a fresh key on its way into the log), then
 * the forgetting of the keys its earlier value went under, so a replaced value is crypto-shredded too.
 */
export function setSecret(
  m: ReadModels,
  s: { name: string; value: string; keyIds: readonly string[] },
  max: number,
): NewEvent<SecretSet | PersonalDataForgotten>[] {
  const name = checkSecretName(s.name);
  const value = checkSecretValue(s.value);
  const replaced = !!m.secrets.get(name);
  if (!replaced && m.secrets.count() >= max)
    throw new DomainError('secrets.too_many', 'conflict', `the relay holds ${max} secrets already (RELAY_MCP_SECRETS_MAX): forget one first`);
  const old = keysOfSecret(s.keyIds, name);
  return [{ type: 'secret.set', data: { name, value, replaced } }, ...(old.length ? [forgetting(name, old)] : [])];
}

/** Forgets a secret: its keys destroyed (the records stay, unreadable); an unknown name is refused. */
export function forgetSecret(m: ReadModels, name: string, keyIds: readonly string[]): NewEvent<PersonalDataForgotten>[] {
  checkSecretName(name);
  if (!m.secrets.get(name)) throw new DomainError('secrets.unknown', 'not_found', `no secret is named "${name}"`);
  return [forgetting(name, keysOfSecret(keyIds, name))];
}

function forgetting(name: string, keys: string[]): NewEvent<PersonalDataForgotten> {
  return { type: 'personal.forgotten', data: { scope: 'secret', device: secretKeyOwner(name), before: null, keys } };
}

/** The value to type, or the refusal an agent gets (a name it may show; never the value). */
export function secretToType(m: ReadModels, name: string): string {
  checkSecretName(name);
  const s = m.secrets.get(name);
  if (!s)
    throw new DomainError(
      'secrets.unknown',
      'not_found',
      `no secret is named "${name}" (never registered, or forgotten): the operator registers one with svc relay secrets set ${name}`,
    );
  if (s.value === null) throw new DomainError('secrets.forgotten', 'gone', `the secret "${name}" was forgotten: the operator must set it again`);
  return s.value;
}

/**
 * A secret's command as the log and the questions show it: the safety pipeline decided on the value (its
 * destructive words, the phone's trusted ones), but the verb it found is a word of the value, so every
 * decision about it is recorded under `type_secret` with a reason that names the secret, not the word.
 */
export function maskSecretDecisions(events: NewEvent<BridgeEvent>[], name: string): NewEvent<BridgeEvent>[] {
  return events.map((e) => {
    if (e.type === 'bridge.command_sent') return { ...e, data: { ...e.data, secret: name } };
    if (e.type !== 'bridge.safety_decided' || e.data.verb === undefined) return e;
    const label = secretLabel(name);
    const reason =
      e.data.decision === 'trusted_verb'
        ? `${label} holds a destructive word the phone trusts (not shown)`
        : `${label} holds a destructive word (not shown): asking ${e.data.by === 'phone' ? "the phone's" : 'the'} user`;
    return { ...e, data: { ...e.data, verb: SECRET_VERB, reason } };
  });
}

/** Scrubs a phone's answer: every occurrence of the value in its strings (keys included) becomes the secret's label. */
export function scrubSecret(value: unknown, secret: string, name: string, depth = 0): unknown {
  if (typeof value === 'string') return value.includes(secret) ? value.split(secret).join(`[${secretLabel(name)}]`) : value;
  if (value === null || typeof value !== 'object') return value;
  // Deeper than any answer the app writes: the whole branch goes if the value is anywhere in it.
  if (depth > 32) return JSON.stringify(value).includes(JSON.stringify(secret).slice(1, -1)) ? `[${secretLabel(name)}]` : value;
  if (Array.isArray(value)) return value.map((v) => scrubSecret(v, secret, name, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[scrubSecret(k, secret, name) as string] = scrubSecret(v, secret, name, depth + 1);
  return out;
}
