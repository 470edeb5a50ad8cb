#!/usr/bin/env node
// An auditor's verifier for svc relay's transparency log, written from the standards alone and sharing
// no code with the relay: node:crypto and these rules only (docs/AUDITING.md).
//   C2SP signed-note  (c2sp.org/signed-note): key ID = SHA-256(name || 0x0A || type || key)[:4], vkey
//                     "<name>+<hex key ID>+<base64(type || key)>", signature lines "— <name> <base64(key ID || sig)>"
//                     over the text up to and including its final newline.
//   C2SP tlog-checkpoint: origin, decimal size, base64 root hash.
//   C2SP tlog-cosignature v1: type 0x04, signature = u64 BE time || Ed25519 over "cosignature/v1\ntime <t>\n" + text.
//   RFC 9162 2.1: leaf = SHA-256(0x00 || record), node = SHA-256(0x01 || l || r); 2.1.3.2 and 2.1.4.2 verifiers.
//
// node scripts/tlog-verify.mjs checkpoint  CHECKPOINT VKEY [WITNESS_VKEY...]
// node scripts/tlog-verify.mjs inclusion   CHECKPOINT VKEY PROOF.json      (from: svc relay events proof --seq N --size S)
// node scripts/tlog-verify.mjs consistency OLD_CHECKPOINT NEW_CHECKPOINT VKEY PROOF.json  (from: --from M --to N)
// Exit 0: verified; 1: it does not verify (the reason on stderr); 2: usage.
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';

const sha = (...parts) => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest();
const node = (l, r) => sha(Buffer.from([1]), l, r);
class Fail extends Error {}
const fail = (m) => {
  throw new Fail(m);
};

function parseVkey(text) {
  // The name holds no plus; the base64 key may.
  const t = text.trim();
  const at = t.indexOf('+');
  const [name, id, key] = [t.slice(0, at), t.slice(at + 1, at + 9), t.slice(at + 10)];
  if (at < 1 || t[at + 9] !== '+' || !/^[0-9a-f]{8}$/.test(id)) fail(`not a vkey: ${t.slice(0, 80)}`);
  const raw = Buffer.from(key, 'base64');
  if (raw.length !== 33 || (raw[0] !== 1 && raw[0] !== 4)) fail('a vkey holds a type byte (0x01 or 0x04) and a 32-byte Ed25519 key');
  if (
    !sha(Buffer.from(name + '\n'), raw)
      .subarray(0, 4)
      .equals(Buffer.from(id, 'hex'))
  )
    fail(`the key ID of vkey ${name} does not match`);
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.subarray(1).toString('base64url') }, format: 'jwk' });
  return { name, id: Buffer.from(id, 'hex'), type: raw[0], pub };
}

/** Opens a checkpoint note: its head, and the names of the verifiers whose signatures verify (a bad known one fails). */
function openCheckpoint(file, vkeys) {
  const text = readFileSync(file, 'utf8');
  const cut = text.lastIndexOf('\n\n');
  if (cut < 0 || !text.endsWith('\n')) fail(`${file}: not a signed note`);
  const body = text.slice(0, cut + 1);
  const signed = [];
  for (const sigLine of text.slice(cut + 2, -1).split('\n')) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(sigLine);
    if (!m) fail(`${file}: a malformed signature line`);
    const raw = Buffer.from(m[2], 'base64');
    const v = vkeys.find((k) => k.name === m[1] && k.id.equals(raw.subarray(0, 4)));
    if (!v) continue; // signed-note: signatures of unknown keys are ignored
    let ok;
    let time = null;
    if (v.type === 1) ok = raw.length === 68 && verify(null, Buffer.from(body), v.pub, raw.subarray(4));
    else {
      time = Number(raw.readBigUInt64BE(4));
      ok = raw.length === 76 && verify(null, Buffer.from(`cosignature/v1\ntime ${time}\n${body}`), v.pub, raw.subarray(12));
    }
    if (!ok) fail(`${file}: bad signature by ${v.name}`);
    signed.push(time === null ? v.name : `${v.name} (cosignature, time ${time})`);
  }
  const [origin, size, root] = body.split('\n');
  if (!/^(0|[1-9]\d*)$/.test(size ?? '') || Buffer.from(root ?? '', 'base64').length !== 32) fail(`${file}: not a tlog-checkpoint`);
  return { origin, size: Number(size), root: Buffer.from(root, 'base64'), signed };
}

function requireLogSignature(cp, logKey) {
  if (!cp.signed.includes(logKey.name)) fail(`not signed by the log key ${logKey.name}`);
}

// RFC 9162 2.1.3.2, with BigInt so no size is too large for the shifts.
function verifyInclusion(index, size, leaf, path, root) {
  if (index >= size) return false;
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r = leaf;
  for (const p of path) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      r = node(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else r = node(r, p);
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  return sn === 0n && r.equals(root);
}

// RFC 9162 2.1.4.2.
function verifyConsistency(first, second, firstRoot, secondRoot, proof) {
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  if (first < 1 || first > second || proof.length === 0) return false;
  const path = (BigInt(first) & BigInt(first - 1)) === 0n ? [firstRoot, ...proof] : proof;
  let fn = BigInt(first - 1);
  let sn = BigInt(second - 1);
  while ((fn & 1n) === 1n) [fn, sn] = [fn >> 1n, sn >> 1n];
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      fr = node(c, fr);
      sr = node(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else sr = node(sr, c);
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0n;
}

const b64s = (list) => list.map((h) => Buffer.from(h, 'base64'));
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

function main([cmd, ...a]) {
  if (cmd === 'checkpoint' && a.length >= 2) {
    const keys = a.slice(1).map(parseVkey);
    const cp = openCheckpoint(a[0], keys);
    requireLogSignature(cp, keys[0]);
    return `ok  ${cp.origin}: tree size ${cp.size}, root ${cp.root.toString('base64')}; signed by ${cp.signed.join(', ')}`;
  }
  if (cmd === 'inclusion' && a.length === 3) {
    const key = parseVkey(a[1]);
    const cp = openCheckpoint(a[0], [key]);
    requireLogSignature(cp, key);
    const p = readJson(a[2]);
    if (p.tree_size !== cp.size) fail(`the proof is for a tree of ${p.tree_size}, the checkpoint's is ${cp.size}`);
    const leaf = sha(Buffer.from([0]), Buffer.from(p.record, 'utf8'));
    if (!verifyInclusion(p.seq - 1, cp.size, leaf, b64s(p.inclusion), cp.root)) fail(`record of seq ${p.seq} is not in the checkpoint's tree`);
    return `ok  the record of seq ${p.seq} is leaf ${p.seq - 1} of ${cp.origin}'s tree of ${cp.size} (root ${cp.root.toString('base64')})`;
  }
  if (cmd === 'consistency' && a.length === 4) {
    const key = parseVkey(a[2]);
    const [older, newer] = [openCheckpoint(a[0], [key]), openCheckpoint(a[1], [key])];
    requireLogSignature(older, key);
    requireLogSignature(newer, key);
    if (older.origin !== newer.origin) fail('the checkpoints are of two logs');
    const p = readJson(a[3]);
    if (p.from !== older.size || p.to !== newer.size)
      fail(`the proof is from ${p.from} to ${p.to}, the checkpoints are of ${older.size} and ${newer.size}`);
    if (!verifyConsistency(older.size, newer.size, older.root, newer.root, b64s(p.consistency)))
      fail(`the tree of ${newer.size} does not extend the tree of ${older.size}: the log was rewritten or rewound`);
    return `ok  ${newer.origin}'s tree of ${newer.size} extends its tree of ${older.size}`;
  }
  console.error('usage: tlog-verify.mjs checkpoint CP VKEY [WVKEY...] | inclusion CP VKEY PROOF | consistency OLD NEW VKEY PROOF');
  process.exit(2);
}

try {
  console.log(main(process.argv.slice(2)));
} catch (err) {
  console.error(`FAILED  ${err instanceof Fail ? err.message : err.stack}`);
  process.exit(1);
}
