import { checkNote, cosignatureLine, NoteFormatError, parseCheckpointText, parseNote, type Verifier } from '@svc/events/merkle/note';
import { verifyConsistency } from '@svc/events/merkle/verify';
import { createHash } from 'node:crypto';
import { keepCosigned, lastSeen, type RefusalCode, type Seen, type WitnessHome } from './witness-run';

/**
 * C2SP tlog-witness `add-checkpoint` (c2sp.org/tlog-witness), the witness's side: the request body
 * parsed by byte offsets, then the spec's checks in the spec's order, then the new tree kept before
 * the cosignature is returned. The caller runs `addCheckpoint` one request at a time (check-and-update
 * must be atomic, or two requests roll the kept tree back: the spec's race).
 */

/** tlog-witness: "The client MUST NOT send more than 63 consistency proof lines." */
export const MAX_PROOF_LINES = 63;
// Anchored, fixed-length classes over one short line each: linear, nothing to backtrack.
const OLD_LINE = /^old (0|[1-9][0-9]{0,15})$/;
const HASH_LINE = /^[A-Za-z0-9+/]{43}=$/;
/** RFC 6962 2.1: the hash of the empty tree, the only root a checkpoint of size 0 can carry. */
const EMPTY_ROOT = createHash('sha256').digest();

export type AddRequest = { old: number; proof: Buffer[]; note: Buffer };

export class AddCheckpointError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 422,
    readonly code: string,
    message: string,
    /** Set when the request shows the log inconsistent with what this witness cosigned: a refusal to record. */
    readonly refused: { code: RefusalCode; checkpoint: Seen } | null = null,
  ) {
    super(message);
  }
}

/** The old size is not the size this witness cosigned last: the protocol's catch-up, not a refusal. */
export class StaleOldSize extends Error {
  constructor(readonly latest: number) {
    super(`the witness cosigned a tree of ${latest} last`);
  }
}

const malformed = (why: string) => new AddCheckpointError(400, 'witness.bad_request', why);

/** `old <N>\n`, up to 63 base64 hash lines, an empty line, then the signed checkpoint. Throws a 400. */
export function parseAddCheckpoint(body: Buffer): AddRequest {
  const first = body.indexOf(0x0a);
  // "old " and at most 16 digits: a longer first line is malformed before it is read as text.
  if (first < 0 || first > 20) throw malformed('the body starts with a line "old <size>"');
  const m = OLD_LINE.exec(body.subarray(0, first).toString('latin1'));
  if (!m || !Number.isSafeInteger(Number(m[1]))) throw malformed('the first line is "old <size>", a decimal without leading zeroes');
  const proof: Buffer[] = [];
  let at = first + 1;
  for (;;) {
    const end = body.indexOf(0x0a, at);
    if (end < 0) throw malformed('no empty line before the checkpoint');
    if (end === at) break;
    if (proof.length === MAX_PROOF_LINES) throw malformed(`more than ${MAX_PROOF_LINES} consistency proof lines`);
    const text = end - at === 44 ? body.subarray(at, end).toString('latin1') : '';
    const hash = HASH_LINE.test(text) ? Buffer.from(text, 'base64') : null;
    if (!hash || hash.length !== 32 || hash.toString('base64') !== text) throw malformed('a consistency proof line is base64 of a 32-byte hash');
    proof.push(hash);
    at = end + 1;
  }
  return { old: Number(m[1]), proof, note: body.subarray(at + 1) };
}

export type Cosigned = { line: string; cosigned: Seen; previous: Seen | null };

/**
 * One add-checkpoint for the log `log` (the only one this home follows). Returns the cosignature line
 * after keeping the new tree; throws StaleOldSize (409 with the size) or AddCheckpointError.
 */
export function addCheckpoint(home: WitnessHome, log: Verifier, req: AddRequest, now: number): Cosigned {
  let note;
  let head;
  try {
    note = parseNote(req.note);
    head = parseCheckpointText(note.text);
  } catch (err) {
    if (err instanceof NoteFormatError) throw new AddCheckpointError(400, 'witness.bad_checkpoint', `the checkpoint: ${err.message}`);
    throw err;
  }
  if (head.origin !== log.name) throw new AddCheckpointError(404, 'witness.unknown_log', 'this witness follows no log of that origin');
  try {
    if (checkNote(note, [log]).length === 0) throw new NoteFormatError('no signature by the log key');
  } catch (err) {
    // signed-note: a known key's line that fails makes the note malformed; tlog-witness answers both with 403.
    if (err instanceof NoteFormatError) throw new AddCheckpointError(403, 'witness.not_signed', `the checkpoint: ${err.message}`);
    throw err;
  }
  if (req.old > head.size)
    throw new AddCheckpointError(400, 'witness.old_too_large', `old size ${req.old} is larger than the checkpoint's ${head.size}`);
  const prev = lastSeen(home);
  if (req.old !== (prev?.size ?? 0)) throw new StaleOldSize(prev?.size ?? 0);
  const seen: Seen = { origin: head.origin, size: head.size, root: head.root.toString('base64'), time: now };
  const unprovable = (why: string) => new AddCheckpointError(422, 'witness.bad_proof', why);
  if (!prev || req.old === 0) {
    // Nothing cosigned yet (or an empty tree): nothing the checkpoint could be inconsistent with.
    if (req.proof.length > 0) throw unprovable('the consistency proof from size 0 is empty');
    if (head.size === 0 && !head.root.equals(EMPTY_ROOT)) throw unprovable('a tree of size 0 has the empty tree hash as root');
  } else if (req.old === head.size) {
    if (req.proof.length > 0) throw unprovable('the consistency proof between equal sizes is empty');
    if (seen.root !== prev.root)
      throw new AddCheckpointError(
        409,
        'witness.rewritten',
        `the tree of ${head.size} records has root ${seen.root}, not the ${prev.root} cosigned: rewritten`,
        { code: 'rewritten', checkpoint: seen },
      );
  } else if (!verifyConsistency(req.old, head.size, Buffer.from(prev.root, 'base64'), head.root, req.proof)) {
    // Not a refusal: the proof is not signed, and anyone can send the log's public checkpoint with a made-up
    // one, so a failed proof proves nothing about the log (and must not make the witness exit 1). The
    // submitter is told; a log that was rewritten is told the same and says so on its side (its refusal).
    // Another root at the cosigned size, above, is evidence: two checkpoints the log's key signed.
    throw new AddCheckpointError(
      422,
      'witness.inconsistent',
      `the proof does not show the tree of ${head.size} extends the tree of ${prev.size} cosigned (root ${prev.root})`,
    );
  }
  // The cosignature covers the note text as sent (extension lines included), as a note verifier checks it.
  const line = cosignatureLine(note.text, home.name, now, home.privateKey, home.publicKey);
  // The same tree again (a log retrying, or anyone replaying its public checkpoint) is cosigned without a
  // write: nothing changed, and a replay should cost a signature, not an fsync.
  if (!prev || prev.size !== seen.size || prev.root !== seen.root) keepCosigned(home, seen);
  return { line, cosigned: seen, previous: prev };
}
