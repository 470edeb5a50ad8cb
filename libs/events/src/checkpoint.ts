import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/**
 * Signed checkpoints: the log's head (seq and hash) signed with the relay's Ed25519 key, so that an
 * auditor who keeps the checkpoint and the public key off the host can prove later that the log still
 * holds that exact record (a history rewritten and re-chained before it cannot match its hash).
 */

export const CHECKPOINT_FORMAT = 'svc-relay-checkpoint/1';
/** A checkpoint is ~250 bytes; anything far larger is not one (checked before any parse). */
export const MAX_CHECKPOINT_BYTES = 4096;

export type Checkpoint = {
  format: typeof CHECKPOINT_FORMAT;
  seq: number;
  hash: string;
  /** When it was signed (ISO, the signer's clock). */
  at: string;
  /** The first 16 hex of the SHA-256 of the raw 32-byte public key. */
  key_id: string;
  /** Base64 Ed25519 signature over `checkpointMessage`. */
  signature: string;
};

export class CheckpointFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointFormatError';
  }
}

const FIELDS = ['format', 'seq', 'hash', 'at', 'key_id', 'signature'] as const;
const HASH_RE = /^[0-9a-f]{64}$/;
const KEY_ID_RE = /^[0-9a-f]{16}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;
const B64_RE = /^[A-Za-z0-9+/]+={0,2}$/;

/** The exact bytes signed: the format name, then seq, hash, time and key id, one per line. */
export function checkpointMessage(c: Pick<Checkpoint, 'seq' | 'hash' | 'at' | 'key_id'>): Buffer {
  return Buffer.from(`${CHECKPOINT_FORMAT}\n${c.seq}\n${c.hash}\n${c.at}\n${c.key_id}\n`, 'utf8');
}

/** The raw 32 bytes of an Ed25519 public key. */
export function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  if (key.asymmetricKeyType !== 'ed25519' || typeof jwk.x !== 'string') throw new CheckpointFormatError('not an Ed25519 key');
  return Buffer.from(jwk.x, 'base64url');
}

/** How a public key is printed and passed around: base64 of its raw 32 bytes. */
export function publicKeyText(key: KeyObject): string {
  return rawPublicKey(key).toString('base64');
}

export function keyIdOf(key: KeyObject): string {
  return createHash('sha256').update(rawPublicKey(key)).digest('hex').slice(0, 16);
}

/** A public key as printed (base64 of the raw 32 bytes) or as a PEM (SPKI); anything else is refused. */
export function parsePublicKey(text: string): KeyObject {
  const t = text.trim();
  if (t.startsWith('-----BEGIN')) {
    let key: KeyObject;
    try {
      key = createPublicKey({ key: t, format: 'pem' });
    } catch {
      throw new CheckpointFormatError('the PEM is not a public key');
    }
    if (key.asymmetricKeyType !== 'ed25519')
      throw new CheckpointFormatError(`the PEM holds an ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`);
    return key;
  }
  const raw = B64_RE.test(t) ? Buffer.from(t, 'base64') : Buffer.alloc(0);
  if (raw.length !== 32 || raw.toString('base64') !== t) {
    throw new CheckpointFormatError('not a public key: give base64 of the raw 32 bytes (as "svc relay events public-key" prints it) or a PEM');
  }
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

/** Signs the head `{seq, hash}` at `at` with the relay's private key. */
export function signCheckpoint(head: { seq: number; hash: string }, at: string, privateKey: KeyObject, publicKey: KeyObject): Checkpoint {
  if (!Number.isSafeInteger(head.seq) || head.seq < 1) throw new CheckpointFormatError('the log is empty: there is no record to sign');
  const body = { seq: head.seq, hash: head.hash, at, key_id: keyIdOf(publicKey) };
  const signature = sign(null, checkpointMessage(body), privateKey).toString('base64');
  return { format: CHECKPOINT_FORMAT, ...body, signature };
}

/** The text a checkpoint file holds (pretty JSON; the signature covers the fields, not these bytes). */
export function checkpointJson(c: Checkpoint): string {
  return JSON.stringify({ format: c.format, seq: c.seq, hash: c.hash, at: c.at, key_id: c.key_id, signature: c.signature }, null, 2) + '\n';
}

/** Reads a checkpoint file's bytes strictly: size first, then JSON, then exactly its six fields in shape. */
export function parseCheckpoint(bytes: Buffer | string): Checkpoint {
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
  if (size > MAX_CHECKPOINT_BYTES) throw new CheckpointFormatError(`${size} bytes: a checkpoint is at most ${MAX_CHECKPOINT_BYTES} bytes`);
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString());
  } catch {
    throw new CheckpointFormatError('not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new CheckpointFormatError('not a JSON object');
  const o = v as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !(FIELDS as readonly string[]).includes(k));
  if (extra.length) throw new CheckpointFormatError(`unknown field ${JSON.stringify(extra[0].slice(0, 40))}`);
  const missing = FIELDS.filter((k) => !(k in o));
  if (missing.length) throw new CheckpointFormatError(`missing field "${missing[0]}"`);
  if (o.format !== CHECKPOINT_FORMAT) throw new CheckpointFormatError(`format is not "${CHECKPOINT_FORMAT}"`);
  if (typeof o.seq !== 'number' || !Number.isSafeInteger(o.seq) || o.seq < 1) throw new CheckpointFormatError('seq is not a whole number >= 1');
  if (typeof o.hash !== 'string' || !HASH_RE.test(o.hash)) throw new CheckpointFormatError('hash is not 64 lowercase hex digits');
  if (typeof o.at !== 'string' || !ISO_RE.test(o.at) || Number.isNaN(Date.parse(o.at))) throw new CheckpointFormatError('at is not an ISO UTC time');
  if (typeof o.key_id !== 'string' || !KEY_ID_RE.test(o.key_id)) throw new CheckpointFormatError('key_id is not 16 lowercase hex digits');
  const sig = typeof o.signature === 'string' && B64_RE.test(o.signature) ? Buffer.from(o.signature, 'base64') : Buffer.alloc(0);
  if (sig.length !== 64 || sig.toString('base64') !== o.signature) throw new CheckpointFormatError('signature is not base64 of 64 bytes');
  return { format: CHECKPOINT_FORMAT, seq: o.seq, hash: o.hash, at: o.at, key_id: o.key_id, signature: o.signature };
}

export type SignatureCheck = { ok: true } | { ok: false; code: 'unknown_key' | 'bad_signature'; message: string };

/** Whether `publicKey` signed this checkpoint (its key id first: a checkpoint of another key is named as such). */
export function checkSignature(c: Checkpoint, publicKey: KeyObject): SignatureCheck {
  const id = keyIdOf(publicKey);
  if (c.key_id !== id) {
    return { ok: false, code: 'unknown_key', message: `unknown key id: the checkpoint was signed by key ${c.key_id}, not by the given key ${id}` };
  }
  if (!verify(null, checkpointMessage(c), publicKey, Buffer.from(c.signature, 'base64'))) {
    return { ok: false, code: 'bad_signature', message: `bad signature: key ${id} did not sign this seq, hash, time and key id` };
  }
  return { ok: true };
}

export type LogMatch =
  | { ok: true; extendedBy: number }
  | { ok: false; code: 'truncated'; message: string }
  | { ok: false; code: 'rewritten'; message: string; found: string };

/**
 * Whether a log whose last record is `lastSeq` and whose record at the checkpoint's seq has `hashAt`
 * (null: none there) still holds the checkpoint's record.
 */
export function matchLog(c: Checkpoint, lastSeq: number, hashAt: string | null): LogMatch {
  if (lastSeq < c.seq || hashAt === null) {
    return {
      ok: false,
      code: 'truncated',
      message: `log shorter than the checkpoint: it ends at seq ${lastSeq}, the checkpoint is of seq ${c.seq} (records were removed: truncated)`,
    };
  }
  if (hashAt !== c.hash) {
    return {
      ok: false,
      code: 'rewritten',
      found: hashAt,
      message: `record at seq ${c.seq} has hash ${hashAt} where the checkpoint says ${c.hash}: the history was rewritten at or before seq ${c.seq}`,
    };
  }
  return { ok: true, extendedBy: lastSeq - c.seq };
}
