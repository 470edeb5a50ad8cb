import { generateKeyPairSync } from 'node:crypto';
import {
  checkpointJson,
  checkpointMessage,
  checkSignature,
  keyIdOf,
  matchLog,
  MAX_CHECKPOINT_BYTES,
  parseCheckpoint,
  parsePublicKey,
  publicKeyText,
  signCheckpoint,
  type Checkpoint,
} from './checkpoint';

const pair = () => generateKeyPairSync('ed25519');
const HASH = 'ab'.repeat(32);
const AT = '2026-03-01T12:00:00.000Z';

describe('signed checkpoints', () => {
  const { privateKey, publicKey } = pair();
  const cp = signCheckpoint({ seq: 41, hash: HASH }, AT, privateKey, publicKey);

  it('signs the head with the key and names the key by the first 16 hex of SHA-256 of its raw 32 bytes', () => {
    expect(cp).toMatchObject({ format: 'svc-relay-checkpoint/1', seq: 41, hash: HASH, at: AT });
    expect(cp.key_id).toMatch(/^[0-9a-f]{16}$/);
    expect(cp.key_id).toBe(keyIdOf(parsePublicKey(publicKeyText(publicKey))));
    expect(Buffer.from(cp.signature, 'base64')).toHaveLength(64);
    // The signed bytes, as OPERATING documents them.
    expect(checkpointMessage(cp).toString()).toBe(`svc-relay-checkpoint/1\n41\n${HASH}\n${AT}\n${cp.key_id}\n`);
  });

  it('a good checkpoint verifies under its key, after a round trip through its file text', () => {
    expect(checkSignature(parseCheckpoint(checkpointJson(cp)), publicKey)).toEqual({ ok: true });
  });

  it('takes the public key as printed (base64 of 32 bytes) or as a PEM, and refuses anything else', () => {
    const printed = publicKeyText(publicKey);
    expect(Buffer.from(printed, 'base64')).toHaveLength(32);
    expect(checkSignature(cp, parsePublicKey(printed))).toEqual({ ok: true });
    expect(checkSignature(cp, parsePublicKey(publicKey.export({ type: 'spki', format: 'pem' }).toString()))).toEqual({ ok: true });
    expect(() => parsePublicKey(printed.slice(4))).toThrow(/raw 32 bytes/);
    expect(() => parsePublicKey('not a key')).toThrow(/raw 32 bytes/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(() => parsePublicKey(rsa)).toThrow(/rsa key, not Ed25519/);
    expect(() => parsePublicKey('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----')).toThrow(/not a public key/);
  });

  it('another key: an unknown key id, naming both ids', () => {
    const other = pair().publicKey;
    const r = checkSignature(cp, other);
    expect(r).toMatchObject({ ok: false, code: 'unknown_key' });
    expect(r.ok || r.message).toContain(cp.key_id);
    expect(r.ok || r.message).toContain(keyIdOf(other));
  });

  it('another key claiming the same key id still fails the signature', () => {
    const forger = pair();
    const forged = signCheckpoint({ seq: 41, hash: HASH }, AT, forger.privateKey, forger.publicKey);
    expect(checkSignature({ ...forged, key_id: cp.key_id }, publicKey)).toMatchObject({ ok: false, code: 'bad_signature' });
  });

  it.each<[string, (c: Checkpoint) => Checkpoint]>([
    ['a flipped signature byte', (c) => ({ ...c, signature: flip(c.signature) })],
    ['another seq', (c) => ({ ...c, seq: c.seq - 1 })],
    ['another hash', (c) => ({ ...c, hash: 'cd'.repeat(32) })],
    ['another time', (c) => ({ ...c, at: '2026-03-02T12:00:00.000Z' })],
  ])('%s: bad signature', (_what, tamper) => {
    expect(checkSignature(parseCheckpoint(checkpointJson(tamper(cp))), publicKey)).toMatchObject({ ok: false, code: 'bad_signature' });
  });

  it('refuses to sign an empty log', () => {
    expect(() => signCheckpoint({ seq: 0, hash: HASH }, AT, privateKey, publicKey)).toThrow(/empty/);
  });
});

describe('a checkpoint file is read strictly', () => {
  const { privateKey, publicKey } = pair();
  const good = JSON.parse(checkpointJson(signCheckpoint({ seq: 7, hash: HASH }, AT, privateKey, publicKey))) as Record<string, unknown>;
  const text = (o: unknown) => JSON.stringify(o);

  it.each<[string, string | Buffer, RegExp]>([
    ['huge', Buffer.alloc(MAX_CHECKPOINT_BYTES + 1, 0x20), /at most 4096 bytes/],
    ['huge but JSON', text({ ...good, pad: 'x'.repeat(10_000) }), /at most 4096 bytes/],
    ['not JSON', 'seq=7 hash=abc', /not JSON/],
    ['empty', '', /not JSON/],
    ['an array', '[1,2]', /not a JSON object/],
    ['null', 'null', /not a JSON object/],
    ['an extra field', text({ ...good, note: 1 }), /unknown field "note"/],
    ['a missing field', text({ ...good, signature: undefined }), /missing field "signature"/],
    ['another format', text({ ...good, format: 'svc-relay-checkpoint/2' }), /format/],
    ['seq as a string', text({ ...good, seq: '7' }), /seq/],
    ['seq 0', text({ ...good, seq: 0 }), /seq/],
    ['seq fractional', text({ ...good, seq: 7.5 }), /seq/],
    ['seq past 2^53', text({ ...good, seq: 1 }).replace('"seq":1,', '"seq":9007199254740993,'), /seq/],
    ['an uppercase hash', text({ ...good, hash: HASH.toUpperCase() }), /hash/],
    ['a short hash', text({ ...good, hash: 'ab' }), /hash/],
    ['a time that is not ISO', text({ ...good, at: 'yesterday' }), /at is not/],
    ['a key id of 8 hex', text({ ...good, key_id: 'abcdef01' }), /key_id/],
    ['a signature of 63 bytes', text({ ...good, signature: Buffer.alloc(63).toString('base64') }), /signature/],
    ['a signature with junk', text({ ...good, signature: `${String(good.signature)}!` }), /signature/],
  ])('%s is refused', (_what, input, reason) => {
    expect(() => parseCheckpoint(input)).toThrow(reason);
  });

  it('the good file reads back to the same fields', () => {
    expect(parseCheckpoint(text(good))).toEqual(good);
  });
});

describe('the log against a checkpoint', () => {
  const { privateKey, publicKey } = pair();
  const cp = signCheckpoint({ seq: 10, hash: HASH }, AT, privateKey, publicKey);

  it('extends it: the same record at its seq, more after', () => {
    expect(matchLog(cp, 15, HASH)).toEqual({ ok: true, extendedBy: 5 });
    expect(matchLog(cp, 10, HASH)).toEqual({ ok: true, extendedBy: 0 });
  });

  it('rewritten: names the seq and both hashes', () => {
    const other = 'cd'.repeat(32);
    const r = matchLog(cp, 15, other);
    expect(r).toMatchObject({ ok: false, code: 'rewritten', found: other });
    expect(r.ok || r.message).toBe(
      `record at seq 10 has hash ${other} where the checkpoint says ${HASH}: the history was rewritten at or before seq 10`,
    );
  });

  it('truncated: the log ends before the checkpoint', () => {
    const r = matchLog(cp, 9, null);
    expect(r).toMatchObject({ ok: false, code: 'truncated' });
    expect(r.ok || r.message).toMatch(/ends at seq 9.*seq 10/);
  });
});

function flip(b64: string): string {
  const b = Buffer.from(b64, 'base64');
  b[5] ^= 0x01;
  return b.toString('base64');
}
