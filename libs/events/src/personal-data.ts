import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { StoredEvent } from './event';
import { forgottenPersonal, isPersonalType, PERSONAL_FIELDS, type PersonalEventType } from './personal-fields';

export * from './personal-fields';

/**
 * Personal content in the log (crypto-shredding). The fields below are sealed in the record (AES-256-GCM
 * under a data key named `<device>:<YYYY-MM-DDTHH>:<random>`, one per device and UTC hour, kept outside the log);
 * the rest of each event stays readable. Three forms of the same event:
 * - record: the personal fields removed, `sealed: { key, iv, ct }` in their place (what the chain covers);
 * - open: the fields back, `sealedWith: key` (what the bus, the projections and an unsealing replay see);
 * - forgotten: the fields emptied, `sealedWith`, `forgotten: true` (the key is gone).
 */

/** Who a device key belongs to when content has no phone yet (a Thread message posted with none subscribed). */
export const HOST_KEY_OWNER = 'host';

const KEY_ID_RE = /^[A-Za-z0-9_-]{1,64}:\d{4}-\d{2}-\d{2}T\d{2}:[0-9a-f]{8}$/;
const AAD_PREFIX = 'svc-personal/1\0';
const MAX_SEALED_CHARS = 4 * 1024 * 1024;

export type SealedField = { key: string; iv: string; ct: string };

/**
 * Which key slot content of a device in the UTC hour of `at` goes under (`<device>:<YYYY-MM-DDTHH>`); the
 * key itself is named by the slot and 8 random hex digits, so a key made after one was destroyed in the
 * same hour never shares its name.
 */
export function personalKeySlot(device: string, at: Date): string {
  return `${device}:${at.toISOString().slice(0, 13)}`;
}

export function newPersonalKeyId(slot: string): string {
  return `${slot}:${randomBytes(4).toString('hex')}`;
}

export function isPersonalKeyId(id: string): boolean {
  return id.length <= 80 && KEY_ID_RE.test(id);
}

/** The device, the slot and the hour (epoch ms of its start) a key id names. */
export function parsePersonalKeyId(id: string): { device: string; slot: string; hourStart: number } | null {
  if (!isPersonalKeyId(id)) return null;
  const [device, hour] = id.split(':');
  const hourStart = Date.parse(`${hour}:00:00.000Z`);
  return Number.isFinite(hourStart) ? { device, slot: `${device}:${hour}`, hourStart } : null;
}

/** Record form: the personal fields sealed under `key` (32 bytes) named `keyId`. */
export function sealPersonal(type: PersonalEventType, data: object, keyId: string, key: Buffer): Record<string, unknown> {
  const fields = PERSONAL_FIELDS[type];
  const rest: Record<string, unknown> = {};
  const secret: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    if (k === 'sealedWith' || k === 'forgotten') continue;
    if (k in fields) secret[k] = v;
    else rest[k] = v;
  }
  const iv = nextIv();
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(AAD_PREFIX + type + '\0' + keyId));
  const ct = Buffer.concat([cipher.update(JSON.stringify(secret), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { ...rest, sealed: { key: keyId, iv: iv.toString('base64'), ct: ct.toString('base64') } satisfies SealedField };
}

// Random 96-bit IVs drawn 256 at a time (one randomBytes call costs ~6 µs, a third of a seal).
let ivPool = Buffer.alloc(0);
let ivAt = 0;
function nextIv(): Buffer {
  if (ivAt + 12 > ivPool.length) {
    ivPool = randomBytes(12 * 256);
    ivAt = 0;
  }
  const iv = ivPool.subarray(ivAt, ivAt + 12);
  ivAt += 12;
  return iv;
}

/** Open form of content just sealed: the data as decided, and the key it went under. */
export function openedPersonal(data: object, keyId: string): Record<string, unknown> {
  return { ...data, sealedWith: keyId };
}

/** The sealed field of a record, when it is one and well formed. */
export function sealedOf(data: unknown): SealedField | null {
  const s = (data as { sealed?: unknown } | null)?.sealed;
  if (typeof s !== 'object' || s === null) return null;
  const { key, iv, ct } = s as Record<string, unknown>;
  if (typeof key !== 'string' || typeof iv !== 'string' || typeof ct !== 'string') return null;
  if (!isPersonalKeyId(key) || iv.length !== 16 || ct.length > MAX_SEALED_CHARS) return null;
  return { key, iv, ct };
}

/**
 * A stored record in open form: decrypted where `keyFor` has its key, in forgotten form where it has not
 * (or the ciphertext does not open under it). Records of other types, and old records never sealed, pass unchanged.
 */
export function unsealPersonal<E extends StoredEvent>(e: E, keyFor: (keyId: string) => Buffer | undefined): E {
  if (!isPersonalType(e.type)) return e;
  const sealed = sealedOf(e.data);
  if (!sealed) return e;
  const key = keyFor(sealed.key);
  const opened = key ? decrypt(e.type, sealed, key) : null;
  const rest: Record<string, unknown> = { ...e.data };
  delete rest.sealed;
  const data = opened ? { ...rest, ...opened, sealedWith: sealed.key } : { ...forgottenPersonal(e.type, rest), sealedWith: sealed.key };
  return { ...e, data } as E;
}

/** What the console's event log shows of a personal event in any form: never the content, only its key and state. */
export function withoutPersonal<E extends StoredEvent>(e: E): E {
  if (!isPersonalType(e.type)) return e;
  const d = e.data as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const fields = PERSONAL_FIELDS[e.type];
  for (const [k, v] of Object.entries(d)) if (!(k in fields) && k !== 'sealed') out[k] = v;
  const sealed = sealedOf(d);
  if (sealed) out.sealedWith = sealed.key;
  if (out.sealedWith || out.forgotten) out.content = out.forgotten ? 'forgotten' : 'sealed';
  return { ...e, data: out } as E;
}

function decrypt(type: PersonalEventType, sealed: SealedField, key: Buffer): Record<string, unknown> | null {
  try {
    const iv = Buffer.from(sealed.iv, 'base64');
    const body = Buffer.from(sealed.ct, 'base64');
    if (iv.length !== 12 || body.length < 16) return null;
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(AAD_PREFIX + type + '\0' + sealed.key));
    decipher.setAuthTag(body.subarray(body.length - 16));
    const text = Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    // Only the fields this type seals come back (a record cannot smuggle other fields through the ciphertext).
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(PERSONAL_FIELDS[type])) if (k in parsed) out[k] = (parsed as Record<string, unknown>)[k];
    return out;
  } catch {
    return null;
  }
}
