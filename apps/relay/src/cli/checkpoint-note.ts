import type { LogSource, LogVerifyReport } from '@svc/events';
import { MAX_CHECKPOINT_BYTES } from '@svc/events/checkpoint';
import { buildTree } from '@svc/events/merkle/build';
import { checkNote, NoteFormatError, parseCheckpointText, parseNote, parseVkey, MAX_NOTE_BYTES, type Verifier } from '@svc/events/merkle/note';
import * as fs from 'node:fs';
import { svcHomeFrom } from '../common/config/config';
import { logIdentity } from '../transparency/log-identity';
import {
  checkpointVerdict,
  prepareCheckpoint,
  printVerdict,
  readCheckpointBytes,
  type CheckpointVerdict,
  type PreparedCheckpoint,
} from './checkpoint';
import { CliError, colours, EXIT, line, type CliIo } from './io';

/**
 * `verify --checkpoint FILE` for both forms an auditor may hold: the C2SP checkpoint (a signed note, issue
 * 39) and the older JSON one (`{seq, hash, signature}`), told apart by the first byte; the verdict says
 * which form it read. A note is judged by the verifier keys given (--vkey, the log's and any witness's),
 * else by the home's own; the tree of the log now must hold the checkpoint's tree as its prefix.
 */
export type NotePrepared = {
  form: 'c2sp-note';
  file: string;
  origin: string;
  size: number;
  root: Buffer;
  keySource: 'given' | 'home';
  signers: Array<{ name: string; cosignature: boolean; time: number | null }>;
  ignored: string[];
  problem: { code: string; message: string } | null;
};
export type AnyPrepared = NotePrepared | ({ form: 'json-v1' } & PreparedCheckpoint);
export type NoteVerdict = {
  form: 'c2sp-note';
  ok: boolean;
  file: string;
  origin: string;
  tree_size: number;
  root: string;
  key_source: 'given' | 'home';
  signed_by: NotePrepared['signers'];
  ignored_signers: string[];
  extended_by: number | null;
  problems: Array<{ code: string; message: string }>;
};
export type AnyVerdict = NoteVerdict | ({ form: 'json-v1' } & CheckpointVerdict);

export function prepareAnyCheckpoint(file: string, publicKey: string | undefined, vkeys: string[], env: NodeJS.ProcessEnv): AnyPrepared {
  const { bytes } = readCheckpointBytes(file, Math.max(MAX_NOTE_BYTES, MAX_CHECKPOINT_BYTES));
  // --public-key judges the JSON form only (what it always did, malformed files included).
  const json = /^\s*\{/.test(bytes.subarray(0, 64).toString());
  if (json || publicKey !== undefined) {
    if (vkeys.length) throw new CliError(`--checkpoint ${file}: a JSON checkpoint is judged with --public-key, a C2SP one with --vkey`);
    return { form: 'json-v1', ...prepareCheckpoint(file, publicKey, env) };
  }
  let verifiers: Verifier[];
  try {
    verifiers = vkeys.length ? vkeys.map((k) => parseVkey(readVkeyArg(k))) : [parseVkey(logIdentity(svcHomeFrom(env)).vkey)];
  } catch (err) {
    if (err instanceof NoteFormatError) throw new CliError(`--vkey: ${err.message}`);
    throw err;
  }
  try {
    const note = parseNote(bytes);
    const head = parseCheckpointText(note.text);
    const known = new Set(verifiers.map((v) => `${v.name} ${v.keyHash.toString('hex')}`));
    const ignored = note.signatures.filter((s) => !known.has(`${s.name} ${s.keyHash.toString('hex')}`)).map((s) => s.name);
    const base = {
      form: 'c2sp-note' as const,
      file,
      origin: head.origin,
      size: head.size,
      root: head.root,
      keySource: vkeys.length ? ('given' as const) : ('home' as const),
      ignored,
    };
    let signers: NotePrepared['signers'];
    try {
      signers = checkNote(note, verifiers).map((s) => ({ name: s.name, cosignature: s.type === 4, time: s.time ?? null }));
    } catch (err) {
      if (!(err instanceof NoteFormatError)) throw err;
      return { ...base, signers: [], problem: { code: 'bad_signature', message: err.message } };
    }
    const logSigned = signers.some((s) => s.name === head.origin && !s.cosignature);
    const problem = logSigned
      ? null
      : { code: 'unknown_key', message: `no signature by the log's key (${head.origin}) among the verifier keys given` };
    return { ...base, signers, problem };
  } catch (err) {
    if (err instanceof NoteFormatError) throw new CliError(`--checkpoint ${file}: malformed checkpoint: ${err.message}`);
    throw err;
  }
}

/** `--vkey`: the key itself or a file holding it. */
function readVkeyArg(arg: string): string {
  if (arg.includes('+')) return arg;
  if (fs.existsSync(arg) && fs.statSync(arg).isFile() && fs.statSync(arg).size <= 4096) return fs.readFileSync(arg, 'utf8');
  return arg;
}

export async function anyVerdict(p: AnyPrepared, source: LogSource, report: LogVerifyReport): Promise<AnyVerdict> {
  if (p.form === 'json-v1') return { form: 'json-v1', ...(await checkpointVerdict(p, source, report)) };
  const problems: NoteVerdict['problems'] = p.problem ? [p.problem] : [];
  let extended: number | null = null;
  try {
    const tree = await buildTree(source);
    if (tree.size < p.size)
      problems.push({
        code: 'truncated',
        message: `log shorter than the checkpoint: its tree has ${tree.size} records, the checkpoint's ${p.size} (records were removed: truncated)`,
      });
    else if (p.size < tree.cut)
      problems.push({
        code: 'pruned',
        message: `the checkpoint's tree (${p.size}) is before the log's cut at ${tree.cut}: it can no longer be compared`,
      });
    else if (!tree.root(p.size).equals(p.root))
      problems.push({
        code: 'rewritten',
        message: `the log's tree of ${p.size} records has root ${tree.root(p.size).toString('base64')} where the checkpoint says ${p.root.toString('base64')}: the history was rewritten (or rewound and regrown) within its first ${p.size} records`,
      });
    else extended = tree.size - p.size;
  } catch (err) {
    problems.push({ code: 'unreadable', message: (err as Error).message });
  }
  if (!report.ok) problems.push({ code: 'chain_broken', message: `the chain is broken at seq ${report.seq} (${report.segment}): ${report.reason}` });
  return {
    form: 'c2sp-note',
    ok: problems.length === 0,
    file: p.file,
    origin: p.origin,
    tree_size: p.size,
    root: p.root.toString('base64'),
    key_source: p.keySource,
    signed_by: p.signers,
    ignored_signers: p.ignored,
    extended_by: extended,
    problems,
  };
}

export function printAnyVerdict(io: CliIo, v: AnyVerdict): number {
  if (v.form === 'json-v1') {
    line(io.stdout, `    read a JSON checkpoint (svc-relay-checkpoint/1, the form before the transparency log)`);
    return printVerdict(io, v);
  }
  const whose = v.key_source === 'home' ? "the home's own verifier key; an auditor passes their own copy with --vkey" : 'the verifier keys given';
  const signers = v.signed_by
    .map((s) => (s.cosignature ? `${s.name} (cosigned ${new Date((s.time ?? 0) * 1000).toISOString()})` : s.name))
    .join(', ');
  if (v.ok) {
    const c = colours(io.stdout, io.env);
    line(
      io.stdout,
      `${c.green('ok')}  checkpoint ${v.file} (C2SP signed note): ${v.origin}, tree size ${v.tree_size}, signed by ${signers} (${whose})`,
    );
    if (v.ignored_signers.length) line(io.stdout, `    not checked (no verifier key given): ${v.ignored_signers.join(', ')}`);
    line(io.stdout, `    the log's tree extends it (same root at size ${v.tree_size}) by ${v.extended_by} record${v.extended_by === 1 ? '' : 's'}`);
    return EXIT.ok;
  }
  const e = colours(io.stderr, io.env);
  line(io.stderr, `${e.red('CHECKPOINT FAILED')}  ${v.file} (C2SP signed note): ${v.origin}, tree size ${v.tree_size} (judged by ${whose})`);
  if (signers) line(io.stderr, `  signed by ${signers}`);
  for (const p of v.problems) line(io.stderr, `  ${p.message}`);
  return EXIT.failed;
}
