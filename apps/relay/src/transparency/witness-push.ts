import { checkNote, NoteFormatError, parseNote, type Verifier } from '@svc/events/merkle/note';

/**
 * The relay's side of C2SP tlog-witness (https://c2sp.org/tlog-witness): it submits each published
 * checkpoint to the witnesses listed in RELAY_WITNESS_URLS (`POST <prefix>/add-checkpoint`: `old N`, the
 * consistency proof from N, a blank line, the signed checkpoint) and keeps the cosignatures they answer,
 * so any standard witness (not only `svc relay witness`) can cosign this log. Pure parts here: the
 * setting, the request body, the reading of an answer. The rounds are TransparencyService's.
 */
export type PushTarget = { witness: Verifier; url: string };

/** What a witness answered last, for the Store page and GET /log/witnesses. */
export type PushState = {
  url: string;
  state: 'pending' | 'ok' | 'error' | 'refused';
  /** When the last submission ended (ms, the relay's clock); null before the first. */
  at: number | null;
  /** What went wrong (the witness's status and the first of its answer), or null. */
  message: string | null;
  /** The earliest time of the next submission after a failure (ms), or null. */
  next_at: number | null;
  failures: number;
};

/** An answer is read up to this (a witness answers a few signature lines; more is not a witness). */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** How long one submission may take. */
export const PUSH_TIMEOUT_MS = 10_000;

/** The wait after `failures` failures in a row: 10 s doubling, at most 15 minutes. */
export const pushBackoffMs = (failures: number) => Math.min(10_000 * 2 ** Math.min(Math.max(failures - 1, 0), 20), 15 * 60_000);

/** RELAY_WITNESS_URLS (checked by the config) with each witness's verifier (RELAY_WITNESS_VKEYS). */
export function pushTargets(entries: ReadonlyArray<{ name: string; url: string }>, witnesses: readonly Verifier[]): PushTarget[] {
  return entries.map((e) => ({ witness: witnesses.find((w) => w.name === e.name)!, url: e.url }));
}

/** The add-checkpoint body: `old N`, one base64 hash a line, a blank line, the checkpoint (a signed note). */
export function addCheckpointBody(old: number, proof: readonly Buffer[], note: string): string {
  return `old ${old}\n${proof.map((h) => h.toString('base64') + '\n').join('')}\n${note}`;
}

/** A 409's body under `text/x.tlog.size`: the size the witness cosigned last. */
export function parseSizeAnswer(body: string): number | null {
  const m = /^(0|[1-9]\d{0,15})\n?$/.exec(body);
  return m ? Number(m[1]) : null;
}

/**
 * A 200's body: note signature lines. Read as the spec says (appended to the checkpoint, checked with the
 * witness's key, other signers ignored): the witness's cosignature line and its time, or an error (a
 * line of its key that does not verify is one).
 */
export function readCosignature(checkpointText: string, body: string, witness: Verifier): { line: string; time: number } {
  let note;
  try {
    note = parseNote(`${checkpointText}\n${body.endsWith('\n') ? body : body + '\n'}`);
  } catch (err) {
    if (err instanceof NoteFormatError) throw new Error(`the answer is not signature lines: ${err.message}`);
    throw err;
  }
  const mine = note.signatures.find((s) => s.name === witness.name && s.keyHash.equals(witness.keyHash));
  if (!mine) throw new Error(`the answer holds no signature line of ${witness.name}`);
  const [checked] = checkNote({ text: note.text, signatures: [mine] }, [witness]);
  return { line: mine.line, time: checked.time! };
}

/** A URL as shown (console, logs): without any user name or password it carries. */
export function shownUrl(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString().replace(/\/$/, '');
}

/** A peer's text for a message: one line, printable, short. */
export function excerpt(text: string, max = 200): string {
  let out = '';
  for (const ch of text.slice(0, max * 2)) {
    const c = ch.codePointAt(0)!;
    out += c < 0x20 || c === 0x7f ? ' ' : ch;
    if (out.length >= max) break;
  }
  return out.trim();
}
