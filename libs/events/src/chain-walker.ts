import { checkLine } from './chain';
import { GENESIS_HASH, type StoredEvent } from './event';
import { ChainError, type RecordedCut } from './event-store';
import { jsonDepthExceeds, MAX_FILE_JSON_DEPTH } from './json-limits';

export type WalkOptions = {
  /** Records from this seq on go to `onEvent` (a snapshot covers the ones before). */
  fromSeq: number;
  /** The hash of record `fromSeq - 1` (the snapshot's), checked when the walk reaches it. */
  expectPrev?: string;
  onEvent?: (event: StoredEvent) => void;
};

/**
 * The one way a log is proven, whatever holds it: each record's own checksum, consecutive seqs, the
 * previous-hash links, and the link to a snapshot. The file store feeds it lines of segments, the
 * PostgreSQL store rows; both fail with the same ChainError for the same damage.
 */
export class ChainWalker {
  private expectedSeq: number;
  private prev: string | undefined;
  lastSeq = 0;
  lastHash = GENESIS_HASH;
  /** The log's first record when it is not seq 1 (a pruned log): its seq, its link and where it is. */
  private head: { seq: number; prev: string; where: string } | null = null;
  /** Every cut the walk read a `log.pruned` record of. */
  private readonly cuts: RecordedCut[] = [];

  /**
   * `firstSeq`: the seq the walk starts at: 1 (the first record must link to the genesis hash), a later one
   * when a snapshot lets it skip the head (its link is taken as read), or `'head'`: the log's first record,
   * seq 1 or, in a pruned log, the one after a cut that `finish` must find recorded in the log; or `'any'`:
   * whatever record comes first, its link taken as read (a walk a snapshot lets start in the middle).
   */
  constructor(
    private readonly opts: WalkOptions,
    private readonly firstSeq: number | 'head' | 'any' = 1,
  ) {
    this.expectedSeq = typeof firstSeq === 'number' ? firstSeq : -1;
    this.prev = firstSeq === 1 ? GENESIS_HASH : undefined;
  }

  /** The cut the log starts at (null: it starts at seq 1); known once `finish` returned. */
  get startCut(): RecordedCut | null {
    return this.head === null ? null : (this.cuts.find((c) => c.cutSeq === this.head!.seq - 1) ?? null);
  }

  /** The seq the next record must carry. */
  get next(): number {
    return this.expectedSeq;
  }

  /** Checks one record (its exact stored text); `where` names its container in a ChainError. */
  record(text: string, where: string): void {
    const check = checkLine(text);
    if (!check.ok) throw new ChainError(Math.max(this.expectedSeq, this.lastSeq + 1), where, check.reason);
    if (this.expectedSeq === -1) {
      this.expectedSeq = check.seq;
      if (check.seq === 1) this.prev = GENESIS_HASH;
      else if (this.firstSeq === 'head') this.head = { seq: check.seq, prev: check.prev, where };
    }
    // The snapshot sits exactly at the cut: the record it names was dropped, so the first one must link to it.
    if (this.head?.seq === check.seq && this.opts.expectPrev !== undefined && this.opts.fromSeq === check.seq && check.prev !== this.opts.expectPrev)
      throw new ChainError(check.seq, where, 'the snapshot does not match this record');
    if (text.includes(PRUNED_MARK)) this.cuts.push(readCut(text, check.seq, where));
    if (check.seq !== this.expectedSeq) throw new ChainError(check.seq, where, `expected seq ${this.expectedSeq}`);
    if (this.prev !== undefined && check.prev !== this.prev) throw new ChainError(check.seq, where, 'previous-hash link does not match');
    const { fromSeq, expectPrev, onEvent } = this.opts;
    if (expectPrev !== undefined && check.seq === fromSeq - 1 && check.hash !== expectPrev) {
      throw new ChainError(check.seq, where, 'the snapshot does not match this record');
    }
    this.expectedSeq = check.seq + 1;
    this.prev = check.hash;
    this.lastSeq = check.seq;
    this.lastHash = check.hash;
    if (onEvent && check.seq >= fromSeq) {
      // The chain hash is no MAC: a record rewritten with its chain recomputed still passes, and
      // projections and the console walk what it holds.
      if (jsonDepthExceeds(text, MAX_FILE_JSON_DEPTH)) {
        throw new ChainError(check.seq, where, `record nests JSON deeper than ${MAX_FILE_JSON_DEPTH} levels`);
      }
      const event = JSON.parse(text) as { -readonly [K in keyof StoredEvent]: StoredEvent[K] };
      event.type = canonicalType(event.type);
      onEvent(event as StoredEvent);
    }
  }

  /** After the last record: a snapshot newer than the log's end means records were lost. */
  finish(): void {
    if (this.opts.fromSeq > 1 && this.lastSeq < this.opts.fromSeq - 1) {
      throw new ChainError(this.opts.fromSeq - 1, '(snapshot)', `the log ends at seq ${this.lastSeq}, before the snapshot`);
    }
    const head = this.head;
    if (head === null) return;
    // A log may start after seq 1 only where it recorded a cut, and its first record must link to the cut's hash.
    const cut = this.cuts.find((c) => c.cutSeq === head.seq - 1);
    if (!cut) throw new ChainError(1, head.where, unrecordedHeadReason(head.seq));
    if (cut.cutHash !== head.prev)
      throw new ChainError(
        head.seq,
        head.where,
        `its link does not match the cut recorded at seq ${cut.recordedAt} (hash ${cut.cutHash.slice(0, 16)}…)`,
      );
  }
}

const PRUNED_MARK = '"type":"log.pruned"';

function readCut(text: string, seq: number, where: string): RecordedCut {
  const d = (JSON.parse(text) as { data?: { cutSeq?: unknown; cutHash?: unknown; cutAt?: unknown } }).data;
  if (!d || !Number.isSafeInteger(d.cutSeq) || typeof d.cutHash !== 'string' || typeof d.cutAt !== 'string')
    throw new ChainError(seq, where, 'a log.pruned record without its cut');
  return { cutSeq: d.cutSeq as number, cutHash: d.cutHash, cutAt: d.cutAt, recordedAt: seq };
}

/** Why a log that starts after seq 1 without a recorded cut there is refused (the chain cannot be proven from its start). */
export function unrecordedHeadReason(firstSeq: number): string {
  return `the log does not start at seq 1: its oldest record is seq ${firstSeq}, so the records before it are missing (and no recorded cut says they were pruned)`;
}

const canonical = new Map<string, string>();
const MAX_CANONICAL = 4096;

/**
 * The type string V8 keeps once for the whole process (a property key is always interned): every read model
 * switches on `type`, and a switch compares an interned string by address but a freshly parsed one letter by
 * letter, so twenty read models spent most of an idle `apply` comparing (docs/BENCHMARKS.md, replay). Bounded:
 * a log with more distinct types than the relay has keeps the rest as parsed.
 */
export function canonicalType(type: string): string {
  if (typeof type !== 'string') return type;
  let c = canonical.get(type);
  if (c === undefined) {
    if (canonical.size >= MAX_CANONICAL) return type;
    c = Object.keys({ [type]: 0 })[0];
    canonical.set(type, c);
  }
  return c;
}
