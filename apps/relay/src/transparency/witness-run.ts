import {
  checkNote,
  checkpointText,
  cosignatureLine,
  NoteFormatError,
  parseCheckpointText,
  parseNote,
  parseVkey,
  SIG_COSIGNATURE_V1,
  vkeyText,
} from '@svc/events/merkle/note';
import { verifyConsistency } from '@svc/events/merkle/verify';
import { createFileExclusive } from '@svc/events';
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';
import { refusalMessage } from './transparency.service';

/**
 * A witness (C2SP tlog-witness's role, over this relay's own routes): its own home and Ed25519 key; it
 * remembers the newest tree head it cosigned for the log and cosigns a newer one only when a consistency
 * proof shows it extends that one. Anything else (a smaller tree, another root at the same size, a proof
 * that fails, a checkpoint not signed by the log's key) is refused: recorded in its home, reported to the
 * relay signed, and returned for the CLI to say loudly.
 */
export type WitnessHome = { dir: string; name: string; privateKey: KeyObject; publicKey: KeyObject; vkey: string };
export type Seen = { origin: string; size: number; root: string; time: number };
export type WitnessOutcome =
  | { ok: true; cosigned: Seen; previous: Seen | null; submitted: boolean }
  | { ok: false; reason: string; code: 'rewound' | 'rewritten' | 'inconsistent' | 'bad_signature' | 'unreachable'; checkpoint: Seen | null };

export type RefusalCode = Exclude<WitnessOutcome, { ok: true }>['code'];

const MAX_BODY = 64 * 1024;

export function openWitnessHome(dir: string, name: string | undefined): WitnessHome {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const keyFile = path.join(dir, 'witness-key.pem');
  const nameFile = path.join(dir, 'name');
  if (!fs.existsSync(keyFile)) {
    if (!name) throw new Error(`no witness key in ${dir} yet: give --name NAME (e.g. witness.example.com/w1) to make one`);
    createFileExclusive(keyFile, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    fs.writeFileSync(nameFile, name + '\n', { mode: 0o644 });
  }
  const own = fs.readFileSync(nameFile, 'utf8').trim();
  if (name && name !== own) throw new Error(`this witness home is ${own}, not ${name}`);
  const privateKey = createPrivateKey(fs.readFileSync(keyFile, 'utf8'));
  const publicKey = createPublicKey(privateKey);
  return { dir, name: own, privateKey, publicKey, vkey: vkeyText(own, SIG_COSIGNATURE_V1, publicKey) };
}

const stateFile = (home: WitnessHome) => path.join(home.dir, 'state.json');

export function lastSeen(home: WitnessHome): Seen | null {
  const f = stateFile(home);
  return fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, 'utf8')) as Seen) : null;
}

async function getText(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const body = await res.text();
  if (body.length > MAX_BODY) throw new Error(`${url}: more than ${MAX_BODY} bytes`);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status} ${body.slice(0, 200)}`);
  return body;
}

/** One round: fetch, verify, cosign and submit, or refuse. `now` is unix seconds. */
export async function witnessOnce(home: WitnessHome, relayUrl: string, logVkey: string, now: number): Promise<WitnessOutcome> {
  let base = relayUrl;
  while (base.endsWith('/')) base = base.slice(0, -1);
  const log = parseVkey(logVkey);
  let text: string;
  let head;
  try {
    const note = parseNote(await getText(`${base}/log/checkpoint`));
    if (!checkNote(note, [log]).some((s) => s.name === log.name)) throw new NoteFormatError(`not signed by the log key ${log.name}`);
    text = note.text;
    head = parseCheckpointText(text);
  } catch (err) {
    const code = err instanceof NoteFormatError ? 'bad_signature' : 'unreachable';
    return refuse(home, base, null, code, `the relay's checkpoint: ${(err as Error).message}`, now);
  }
  const seen: Seen = { origin: head.origin, size: head.size, root: head.root.toString('base64'), time: now };
  if (head.origin !== log.name)
    return refuse(home, base, seen, 'bad_signature', `the checkpoint's origin ${head.origin} is not the log's ${log.name}`, now);
  const prev = lastSeen(home);
  if (prev) {
    if (head.size < prev.size)
      return refuse(home, base, seen, 'rewound', `the log went back from ${prev.size} records (cosigned) to ${head.size}: rewound or truncated`, now);
    if (head.size === prev.size && seen.root !== prev.root)
      return refuse(
        home,
        base,
        seen,
        'rewritten',
        `the tree of ${head.size} records now has root ${seen.root}, not the ${prev.root} cosigned: rewritten`,
        now,
      );
    if (head.size > prev.size) {
      let proof: Buffer[];
      try {
        const j = JSON.parse(await getText(`${base}/log/proof/consistency?from=${prev.size}&to=${head.size}`)) as { consistency?: unknown };
        if (!Array.isArray(j.consistency) || j.consistency.length > 128 || !j.consistency.every((h) => typeof h === 'string'))
          throw new Error('not a consistency proof');
        proof = (j.consistency as string[]).map((h) => Buffer.from(h, 'base64'));
      } catch (err) {
        return refuse(home, base, seen, 'inconsistent', `no consistency proof from ${prev.size} to ${head.size}: ${(err as Error).message}`, now);
      }
      if (!verifyConsistency(prev.size, head.size, Buffer.from(prev.root, 'base64'), head.root, proof))
        return refuse(
          home,
          base,
          seen,
          'inconsistent',
          `the tree of ${head.size} does not extend the tree of ${prev.size} cosigned (root ${prev.root}): rewritten or rewound and regrown`,
          now,
        );
    }
  }
  const line = cosignatureLine(checkpointText(head.origin, head.size, head.root), home.name, now, home.privateKey, home.publicKey);
  keepCosigned(home, seen);
  let submitted = false;
  const res = await fetch(`${base}/log/cosignature`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ size: head.size, cosignature: line }),
    signal: AbortSignal.timeout(30_000),
  }).catch(() => null);
  submitted = res?.ok ?? false;
  return { ok: true, cosigned: seen, previous: prev, submitted };
}

async function refuse(home: WitnessHome, base: string, cp: Seen | null, code: RefusalCode, reason: string, now: number): Promise<WitnessOutcome> {
  recordRefusal(home, base, cp, code, reason, now);
  if (cp && code !== 'unreachable') {
    // Told to the relay, signed, so its operator sees it on the Store page (the witness's home keeps it either way).
    const root = Buffer.from(cp.root, 'base64');
    const line = reason.replace(/[\r\n]+/g, ' ').slice(0, 300);
    const signature = sign(null, refusalMessage(now, line, checkpointText(cp.origin, cp.size, root)), home.privateKey).toString('base64');
    await fetch(`${base}/log/witness-refusal`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        witness: home.name,
        key_hash: home.vkey.split('+')[1],
        size: cp.size,
        root: cp.root,
        reason: line,
        time: now,
        signature,
      }),
      signal: AbortSignal.timeout(30_000),
    }).catch(() => null);
  }
  return { ok: false, code, reason, checkpoint: cp };
}

/**
 * What every refusal leaves in the home, whichever way the checkpoint came (a pull round from `relay`, or
 * an add-checkpoint request, named by `from`): a line in refusals.jsonl and the counter in witness.prom.
 */
export function recordRefusal(home: WitnessHome, from: string, cp: Seen | null, code: RefusalCode, reason: string, now: number): void {
  fs.appendFileSync(path.join(home.dir, 'refusals.jsonl'), JSON.stringify({ time: now, relay: from, code, reason, checkpoint: cp }) + '\n', {
    mode: 0o600,
  });
  writeMetrics(home, lastSeen(home), 1);
}

/** Keeps `seen` as the tree this witness cosigned last (state.json, replaced whole) and says so in witness.prom. */
export function keepCosigned(home: WitnessHome, seen: Seen): void {
  atomicWrite(stateFile(home), JSON.stringify(seen) + '\n', { mode: 0o600 });
  writeMetrics(home, seen, 0);
}

/** A Prometheus textfile (node_exporter's textfile collector reads it): refusals counted, the newest cosigned size. */
function writeMetrics(home: WitnessHome, seen: Seen | null, refused: 0 | 1): void {
  const file = path.join(home.dir, 'witness.prom');
  const before = fs.existsSync(file) ? Number(/svc_witness_refusals_total (\d+)/.exec(fs.readFileSync(file, 'utf8'))?.[1] ?? 0) : 0;
  const text = [
    '# HELP svc_witness_refusals_total Checkpoints this witness refused (inconsistent with what it cosigned before).',
    '# TYPE svc_witness_refusals_total counter',
    `svc_witness_refusals_total ${before + refused}`,
    '# HELP svc_witness_cosigned_tree_size The size of the newest tree this witness cosigned.',
    '# TYPE svc_witness_cosigned_tree_size gauge',
    `svc_witness_cosigned_tree_size ${seen?.size ?? 0}`,
    '',
  ].join('\n');
  atomicWrite(file, text, { mode: 0o644 });
}
