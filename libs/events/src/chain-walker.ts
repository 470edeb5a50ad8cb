import { checkLine } from './chain';
import { GENESIS_HASH, type StoredEvent } from './event';
import { ChainError } from './event-store';
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

  /**
   * `firstSeq`: the seq the walk starts at (1, or a later one when a snapshot lets it skip the head);
   * from seq 1 the first record must link to the genesis hash, from later on its link is taken as read.
   */
  constructor(
    private readonly opts: WalkOptions,
    firstSeq = 1,
  ) {
    this.expectedSeq = firstSeq;
    this.prev = firstSeq === 1 ? GENESIS_HASH : undefined;
  }

  /** The seq the next record must carry. */
  get next(): number {
    return this.expectedSeq;
  }

  /** Checks one record (its exact stored text); `where` names its container in a ChainError. */
  record(text: string, where: string): void {
    const check = checkLine(text);
    if (!check.ok) throw new ChainError(this.expectedSeq, where, check.reason);
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
  }
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
