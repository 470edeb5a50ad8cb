import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/**
 * C2SP signed notes (c2sp.org/signed-note), tlog checkpoints (c2sp.org/tlog-checkpoint) and
 * cosignatures (c2sp.org/tlog-cosignature v1), so that code nobody here wrote (Go's sumdb/note, the
 * transparency-dev witnesses, a Python script) reads what the relay signs.
 */

/** signed-note "Signature types": Ed25519 (0x01), and the Ed25519 cosignature/v1 of tlog-cosignature (0x04). */
export const SIG_ED25519 = 0x01;
export const SIG_COSIGNATURE_V1 = 0x04;
/** A checkpoint with a few cosignatures is well under 2 KiB; a note larger than this is refused before any parse. */
export const MAX_NOTE_BYTES = 16 * 1024;
/** signed-note: "implementations MAY reject notes with more than 100 signatures" (Go's sumdb/note does). */
export const MAX_SIGNATURES = 100;
const EM_DASH = '\u2014 ';
const B64_RE = /^[A-Za-z0-9+/]+={0,2}$/;

export class NoteFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoteFormatError';
  }
}

/** signed-note "Key names": non-empty, no Unicode spaces, no plus. */
export function validKeyName(name: string): boolean {
  return name.length > 0 && name.length <= 256 && !/[\s+]/u.test(name) && !name.includes('\u2014');
}

/** signed-note "Key IDs": SHA-256(name || 0x0A || signature type || public key)[:4]. */
export function keyHash(name: string, type: number, rawPublic: Buffer): Buffer {
  return createHash('sha256')
    .update(Buffer.from(name + '\n', 'utf8'))
    .update(Buffer.from([type]))
    .update(rawPublic)
    .digest()
    .subarray(0, 4);
}

export function rawEd25519(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  if (key.asymmetricKeyType !== 'ed25519' || typeof jwk.x !== 'string') throw new NoteFormatError('not an Ed25519 key');
  return Buffer.from(jwk.x, 'base64url');
}

export function ed25519FromRaw(raw: Buffer): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

/** A verifier: who (name), which key (hash), what it signs with (type), and the key. */
export type Verifier = { name: string; type: number; keyHash: Buffer; publicKey: KeyObject };

/** signed-note "Verifier keys": `<name>+<hex key ID>+<base64(type || public key)>`. */
export function vkeyText(name: string, type: number, publicKey: KeyObject): string {
  const raw = rawEd25519(publicKey);
  return `${name}+${keyHash(name, type, raw).toString('hex')}+${Buffer.concat([Buffer.from([type]), raw]).toString('base64')}`;
}

export function parseVkey(text: string): Verifier {
  const t = text.trim();
  if (t.length > 512) throw new NoteFormatError('a verifier key is at most 512 characters');
  // The name holds no plus; the base64 key may.
  const at = t.indexOf('+');
  if (at < 0 || t[at + 9] !== '+') throw new NoteFormatError('a verifier key is <name>+<8 hex>+<base64 key>');
  const [name, hash, b64] = [t.slice(0, at), t.slice(at + 1, at + 9), t.slice(at + 10)];
  if (!validKeyName(name)) throw new NoteFormatError('the verifier key has no valid name');
  if (!/^[0-9a-f]{8}$/.test(hash)) throw new NoteFormatError('the key hash of a verifier key is 8 lowercase hex digits');
  const bytes = B64_RE.test(b64) ? Buffer.from(b64, 'base64') : Buffer.alloc(0);
  if (bytes.length !== 33 || bytes.toString('base64') !== b64)
    throw new NoteFormatError('the key of a verifier key is base64 of a type byte and 32 bytes');
  const type = bytes[0];
  if (type !== SIG_ED25519 && type !== SIG_COSIGNATURE_V1)
    throw new NoteFormatError(`signature type 0x${type.toString(16)} is not Ed25519 (0x01) or cosignature/v1 (0x04)`);
  const raw = bytes.subarray(1);
  if (!keyHash(name, type, raw).equals(Buffer.from(hash, 'hex'))) throw new NoteFormatError('the key hash does not match the name and key');
  return { name, type, keyHash: Buffer.from(hash, 'hex'), publicKey: ed25519FromRaw(raw) };
}

export type NoteSignature = { name: string; keyHash: Buffer; signature: Buffer; line: string };
export type Note = { text: string; signatures: NoteSignature[] };

/**
 * signed-note "Format": UTF-8 text ending in a newline, a blank line, then signature lines
 * `— <name> <base64(4-byte key ID || signature)>` each ending in a newline. The text is everything up
 * to the last blank line (Go's note.Open splits at the last "\n\n").
 */
export function parseNote(input: Buffer | string): Note {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  if (bytes.length > MAX_NOTE_BYTES) throw new NoteFormatError(`${bytes.length} bytes: a note is at most ${MAX_NOTE_BYTES}`);
  const s = bytes.toString('utf8');
  if (!Buffer.from(s, 'utf8').equals(bytes)) throw new NoteFormatError('not UTF-8');
  if (/[\x00-\x09\x0b-\x1f]/.test(s)) throw new NoteFormatError('a control character other than newline');
  const split = s.lastIndexOf('\n\n');
  if (split < 0) throw new NoteFormatError('no blank line before the signatures');
  const text = s.slice(0, split + 1);
  const sigText = s.slice(split + 2);
  if (!sigText.endsWith('\n')) throw new NoteFormatError('the last signature line has no newline');
  const lines = sigText.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new NoteFormatError(`more than ${MAX_SIGNATURES} signatures`);
  const signatures = lines.map((line): NoteSignature => {
    if (!line.startsWith(EM_DASH)) throw new NoteFormatError('a signature line does not start with an em dash and a space');
    const rest = line.slice(EM_DASH.length);
    const sp = rest.indexOf(' ');
    const name = rest.slice(0, sp);
    const b64 = rest.slice(sp + 1);
    if (sp < 0 || !validKeyName(name)) throw new NoteFormatError('a signature line has no valid key name');
    const raw = B64_RE.test(b64) ? Buffer.from(b64, 'base64') : Buffer.alloc(0);
    if (raw.length < 5 || raw.toString('base64') !== b64)
      throw new NoteFormatError(`the signature of ${name.slice(0, 60)} is not base64 of a key ID and a signature`);
    return { name, keyHash: raw.subarray(0, 4), signature: raw.subarray(4), line: line + '\n' };
  });
  if (signatures.length === 0) throw new NoteFormatError('no signature');
  return { text, signatures };
}

export function signatureLine(name: string, hash: Buffer, signature: Buffer): string {
  return `${EM_DASH}${name} ${Buffer.concat([hash, signature]).toString('base64')}\n`;
}

/** A note of `text` signed Ed25519 by `name`'s key (signed-note: the signature covers the text with its final newline). */
export function signNote(text: string, name: string, privateKey: KeyObject, publicKey: KeyObject): string {
  if (!text.endsWith('\n') || text.includes('\n\n')) throw new NoteFormatError('a note text ends in one newline and has no blank line');
  const sig = sign(null, Buffer.from(text, 'utf8'), privateKey);
  return `${text}\n${signatureLine(name, keyHash(name, SIG_ED25519, rawEd25519(publicKey)), sig)}`;
}

/** tlog-cosignature "Ed25519 signed message": `cosignature/v1\ntime <t>\n` and the whole checkpoint text. */
export function cosignedMessage(text: string, time: number): Buffer {
  return Buffer.from(`cosignature/v1\ntime ${time}\n${text}`, 'utf8');
}

/** A cosignature line: key ID (type 0x04), then the timestamped_signature (u64 big-endian time || 64-byte signature). */
export function cosignatureLine(text: string, name: string, time: number, privateKey: KeyObject, publicKey: KeyObject): string {
  const ts = Buffer.alloc(8);
  ts.writeBigUInt64BE(BigInt(time));
  const sig = sign(null, cosignedMessage(text, time), privateKey);
  return signatureLine(name, keyHash(name, SIG_COSIGNATURE_V1, rawEd25519(publicKey)), Buffer.concat([ts, sig]));
}

export type CheckedSignature = { name: string; type: number; keyHash: string; time?: number };

/**
 * signed-note "Verifying": a signature whose name and key ID match a known verifier must verify (else the
 * whole note is refused); lines of unknown keys are ignored. Returns the known signers that signed, in
 * note order (each once). Throws NoteFormatError on a bad known signature.
 */
export function checkNote(note: Note, verifiers: readonly Verifier[]): CheckedSignature[] {
  const out: CheckedSignature[] = [];
  const seen = new Set<string>();
  for (const s of note.signatures) {
    const v = verifiers.find((k) => k.name === s.name && k.keyHash.equals(s.keyHash));
    if (!v) continue;
    const id = `${v.name}+${v.keyHash.toString('hex')}`;
    if (seen.has(id)) continue;
    seen.add(id);
    if (v.type === SIG_ED25519) {
      if (s.signature.length !== 64 || !verify(null, Buffer.from(note.text, 'utf8'), v.publicKey, s.signature))
        throw new NoteFormatError(`bad signature by ${v.name}`);
      out.push({ name: v.name, type: v.type, keyHash: v.keyHash.toString('hex') });
    } else {
      if (s.signature.length !== 72) throw new NoteFormatError(`the cosignature of ${v.name} is not a timestamp and 64 bytes`);
      const time = s.signature.readBigUInt64BE(0);
      if (time > BigInt(Number.MAX_SAFE_INTEGER)) throw new NoteFormatError(`the cosignature of ${v.name} has an impossible time`);
      if (!verify(null, cosignedMessage(note.text, Number(time)), v.publicKey, s.signature.subarray(8)))
        throw new NoteFormatError(`bad cosignature by ${v.name}`);
      out.push({ name: v.name, type: v.type, keyHash: v.keyHash.toString('hex'), time: Number(time) });
    }
  }
  return out;
}

export type TreeHead = { origin: string; size: number; root: Buffer; extensions: string[] };

/** tlog-checkpoint "Note text": origin line, decimal tree size (no leading zeros), base64 root hash, then optional extension lines. */
export function checkpointText(origin: string, size: number, root: Buffer): string {
  return `${origin}\n${size}\n${root.toString('base64')}\n`;
}

export function parseCheckpointText(text: string): TreeHead {
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw new NoteFormatError('a checkpoint has an origin, a size and a root hash line');
  const [origin, sizeText, rootText, ...extensions] = lines;
  if (origin.length === 0) throw new NoteFormatError('the origin line is empty');
  if (!/^(0|[1-9][0-9]{0,15})$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText)))
    throw new NoteFormatError('the size line is not a decimal without leading zeros');
  const root = B64_RE.test(rootText) ? Buffer.from(rootText, 'base64') : Buffer.alloc(0);
  if (root.length !== 32 || root.toString('base64') !== rootText) throw new NoteFormatError('the root hash line is not base64 of 32 bytes');
  return { origin, size: Number(sizeText), root, extensions };
}

/** What an outside reader needs to know a note is a checkpoint rather than the older JSON one. */
export function looksLikeNote(bytes: Buffer): boolean {
  const first = bytes.subarray(0, 1).toString();
  return first !== '{' && first !== ' ' && first !== '\n';
}
