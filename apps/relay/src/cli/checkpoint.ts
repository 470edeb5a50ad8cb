import { checkLine, recordText, verifySource, type LogSource, type LogVerifyReport } from '@svc/events';
import {
  checkpointJson,
  CheckpointFormatError,
  checkSignature,
  matchLog,
  MAX_CHECKPOINT_BYTES,
  parseCheckpoint,
  parsePublicKey,
  signCheckpoint,
  type Checkpoint,
  type SignatureCheck,
} from '@svc/events/checkpoint';
import type { KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';
import { loadCheckpointKey } from '../common/loop/checkpoint-key';
import { svcHomeFrom } from '../common/config/config';
import { CliError, colours, EXIT, line, parseFlags, progressLine, type CliIo } from './io';
import { resolveLogSource } from './log-dir';

// ------------------------------------------------------------------------------------------ public-key

export function publicKeyCommand(args: string[], io: CliIo): number {
  const v = parseFlags('relay events public-key', args, { json: { type: 'boolean' } });
  const key = loadCheckpointKey(svcHomeFrom(io.env), { create: true })!;
  if (v.json) {
    line(io.stdout, JSON.stringify({ algorithm: 'ed25519', public_key: key.publicKeyText, key_id: key.keyId, created: key.created }, null, 2));
    return EXIT.ok;
  }
  if (key.created) line(io.stderr, `made a new checkpoint key: ${key.file} (private, 0600; it never leaves this host)`);
  line(io.stdout, `public key  ${key.publicKeyText}`);
  line(io.stdout, `key id      ${key.keyId}`);
  return EXIT.ok;
}

// ------------------------------------------------------------------------------------------ checkpoint

export async function checkpointCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags('relay events checkpoint', args, { log: { type: 'string' }, out: { type: 'string' }, 'json-v1': { type: 'boolean' } });
  const source = resolveLogSource(io.env, v.log);
  // The C2SP checkpoint (a signed note) unless the older JSON form is asked for (issue 39).
  if (!v['json-v1']) return (await import('./proof')).noteCheckpoint(source, v.out, io);
  const progress = progressLine(io.stderr, 'verifying');
  let report: LogVerifyReport;
  try {
    report = await verifySource(source, progress.update);
  } finally {
    progress.done();
    await source.close();
  }
  if (!report.ok) {
    throw new CliError(`event log broken at seq ${report.seq} (${report.segment}): ${report.reason}\nnot signing a log that fails its proof`);
  }
  if (report.lastSeq === 0) throw new CliError(`the log at ${source.location} is empty: there is no record to sign yet`);
  const key = loadCheckpointKey(svcHomeFrom(io.env), { create: true })!;
  if (key.created) line(io.stderr, `made a new checkpoint key: ${key.file}; give its public key to your auditor ("svc relay events public-key")`);
  const cp = signCheckpoint({ seq: report.lastSeq, hash: report.lastHash }, new Date().toISOString(), key.privateKey, key.publicKey);
  if (v.out === undefined) {
    io.stdout.write(checkpointJson(cp));
    return EXIT.ok;
  }
  atomicWrite(path.resolve(v.out), checkpointJson(cp), { mode: 0o644 });
  line(io.stdout, `checkpoint of seq ${cp.seq} (hash ${cp.hash.slice(0, 16)}…) signed by key ${cp.key_id}: ${v.out}`);
  return EXIT.ok;
}

// ------------------------------------------------------------------------------ verify --checkpoint

/** A checkpoint read and its signature checked, before the log is read. */
export type PreparedCheckpoint = { file: string; checkpoint: Checkpoint; keySource: 'given' | 'home'; signature: SignatureCheck };

export type CheckpointVerdict = {
  ok: boolean;
  file: string;
  seq: number;
  hash: string;
  at: string;
  key_id: string;
  /** Whose public key judged the signature: the one given with --public-key, or the home's own. */
  key_source: 'given' | 'home';
  /** Records the log holds past the checkpoint (when it extends it). */
  extended_by: number | null;
  problems: Array<{ code: string; message: string }>;
};

/** Reads the checkpoint file (size first, strict shape) and the public key, and checks the signature. */
export function prepareCheckpoint(file: string, publicKeyArg: string | undefined, env: NodeJS.ProcessEnv): PreparedCheckpoint {
  const checkpoint = readCheckpointFile(file);
  let key: KeyObject;
  let keySource: PreparedCheckpoint['keySource'];
  if (publicKeyArg !== undefined) {
    key = readPublicKeyArg(publicKeyArg);
    keySource = 'given';
  } else {
    const home = svcHomeFrom(env);
    const own = loadCheckpointKey(home, { create: false });
    if (!own) throw new CliError(`no checkpoint key under ${home}/relay: give the public key that signed it with --public-key KEY`);
    key = own.publicKey;
    keySource = 'home';
  }
  return { file, checkpoint, keySource, signature: checkSignature(checkpoint, key) };
}

/** The prepared checkpoint against the log just verified: does the log still hold its record? */
export async function checkpointVerdict(p: PreparedCheckpoint, source: LogSource, report: LogVerifyReport): Promise<CheckpointVerdict> {
  const c = p.checkpoint;
  const problems: CheckpointVerdict['problems'] = [];
  if (!p.signature.ok) problems.push({ code: p.signature.code, message: p.signature.message });
  // A broken chain still has a record at the checkpoint's seq to compare (unproven from the break on).
  // A checkpoint of a pruned log's cut: its record is gone, but the proven log's first record links to the
  // cut's hash (ChainWalker's rule), so that hash is the record's.
  const cut = report.ok ? report.cut : undefined;
  const hashAt = cut?.cutSeq === c.seq ? cut.cutHash : await hashOfRecord(source, c.seq);
  const lastSeq = report.ok ? report.lastSeq : hashAt === null ? Math.min(report.seq - 1, c.seq - 1) : c.seq;
  const match = matchLog(c, lastSeq, hashAt);
  if (!match.ok) problems.push({ code: match.code, message: match.message });
  if (!report.ok) problems.push({ code: 'chain_broken', message: `the chain is broken at seq ${report.seq} (${report.segment}): ${report.reason}` });
  return {
    ok: problems.length === 0,
    file: p.file,
    seq: c.seq,
    hash: c.hash,
    at: c.at,
    key_id: c.key_id,
    key_source: p.keySource,
    extended_by: match.ok ? match.extendedBy : null,
    problems,
  };
}

export function printVerdict(io: CliIo, v: CheckpointVerdict): number {
  const whose =
    v.key_source === 'home'
      ? "the home's own key; an auditor should pass their own copy of the public key with --public-key"
      : 'the public key given';
  if (v.ok) {
    const c = colours(io.stdout, io.env);
    line(io.stdout, `${c.green('ok')}  checkpoint ${v.file}: seq ${v.seq} signed ${v.at} by key ${v.key_id} (${whose})`);
    line(
      io.stdout,
      `    the log still holds that record (hash ${v.hash}) and extends it by ${v.extended_by} record${v.extended_by === 1 ? '' : 's'}`,
    );
    return EXIT.ok;
  }
  const e = colours(io.stderr, io.env);
  line(io.stderr, `${e.red('CHECKPOINT FAILED')}  ${v.file}: seq ${v.seq}, key ${v.key_id} (judged by ${whose})`);
  for (const p of v.problems) line(io.stderr, `  ${p.message}`);
  return EXIT.failed;
}

/**
 * `--checkpoint FILE`'s bytes, at most `max` + 1 of them (a longer file is refused by its reader, never
 * read whole), with the file's size. Both checkpoint forms read their file here.
 */
export function readCheckpointBytes(file: string, max: number): { bytes: Buffer; size: number } {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    throw new CliError(`--checkpoint ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new CliError(`--checkpoint ${file}: not a file`);
    const buf = Buffer.alloc(max + 1);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return { bytes: buf.subarray(0, n), size: st.size };
  } finally {
    fs.closeSync(fd);
  }
}

function readCheckpointFile(file: string): Checkpoint {
  const { bytes, size } = readCheckpointBytes(file, MAX_CHECKPOINT_BYTES);
  if (size > MAX_CHECKPOINT_BYTES)
    throw new CliError(`--checkpoint ${file}: malformed checkpoint: ${size} bytes, a checkpoint is at most ${MAX_CHECKPOINT_BYTES}`);
  try {
    return parseCheckpoint(bytes);
  } catch (err) {
    if (err instanceof CheckpointFormatError) throw new CliError(`--checkpoint ${file}: malformed checkpoint: ${err.message}`);
    throw err;
  }
}

/** `--public-key`: the key itself (base64 or PEM), or a file holding it. */
function readPublicKeyArg(arg: string): KeyObject {
  let text = arg;
  const looksLikeKey = arg.trim().startsWith('-----BEGIN') || /^[A-Za-z0-9+/]{43}=$/.test(arg.trim());
  if (!looksLikeKey && fs.existsSync(arg) && fs.statSync(arg).isFile()) {
    if (fs.statSync(arg).size > 16 * 1024) throw new CliError(`--public-key ${arg}: too large for a public key`);
    text = fs.readFileSync(arg, 'utf8');
  }
  try {
    return parsePublicKey(text);
  } catch (err) {
    if (err instanceof CheckpointFormatError) throw new CliError(`--public-key: ${err.message}`);
    throw err;
  }
}

/** The hash of the record at `seq` as stored (its own checksum checked), or null when there is none. */
async function hashOfRecord(source: LogSource, seq: number): Promise<string | null> {
  const text = await recordText(source, seq);
  if (text === null) return null;
  const check = checkLine(text);
  return check.ok && check.seq === seq ? check.hash : null;
}
