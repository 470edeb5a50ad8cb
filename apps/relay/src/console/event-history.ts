import {
  jsonDepthExceeds,
  listSegments,
  matchesEventLog,
  MAX_FILE_JSON_DEPTH,
  scanLines,
  type EventLogFilter,
  type StoredRelayEvent,
  withoutPersonal,
} from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';

const SEQ_RE = /^\{"seq":(\d+),/;
const STOP = Symbol('stop');
const TAIL_BYTES = 2 * 1024 * 1024;

export type Page = { events: StoredRelayEvent[]; more: boolean };

/** The newest events in memory, contiguous by seq, fed by the bus. */
export class EventRing {
  events: StoredRelayEvent[] = [];
  constructor(readonly capacity: number) {}

  push(e: StoredRelayEvent): void {
    const last = this.events.at(-1);
    if (last && e.seq <= last.seq) return;
    if (last && e.seq !== last.seq + 1) this.events = []; // a gap: keep the ring contiguous
    this.events.push(e);
    if (this.events.length > this.capacity * 1.5) this.events = this.events.slice(-this.capacity);
  }

  newest(n: number): StoredRelayEvent[] {
    return this.events.slice(-n).reverse();
  }

  /** The first seq the ring holds (Infinity when empty). */
  get start(): number {
    return this.events[0]?.seq ?? Infinity;
  }
}

/**
 * Reads stored events for the console: the newest ones from an in-memory ring fed by the bus (seeded
 * from the log's tail at start), anything older straight from the segment files. Never returns an event
 * past `durableSeq()`: a line on disk whose fsync has not finished is not yet an event anyone may see.
 */
export class EventHistory {
  private readonly store: EventRing;

  constructor(
    private readonly dir: string,
    private readonly durableSeq: () => number,
    private readonly capacity = 5000,
  ) {
    this.store = new EventRing(capacity);
  }

  private get ring(): StoredRelayEvent[] {
    return this.store.events;
  }

  /** Seeds the ring from the last 2 MiB of the log (newest segments first; bounded reads). */
  seed(): void {
    const upTo = this.durableSeq();
    const segments = listSegments(this.dir);
    const parts: StoredRelayEvent[][] = [];
    let budget = TAIL_BYTES;
    for (let i = segments.length - 1; i >= 0 && budget > 0; i--) {
      const file = path.join(this.dir, segments[i].file);
      const size = fs.statSync(file).size;
      const start = Math.max(0, size - budget);
      budget -= size - start;
      if (size === start) continue;
      const buf = Buffer.alloc(size - start);
      const fd = fs.openSync(file, 'r');
      try {
        fs.readSync(fd, buf, 0, buf.length, start);
      } finally {
        fs.closeSync(fd);
      }
      const lines = buf.toString('utf8').split('\n');
      if (start > 0) lines.shift(); // a partial first line
      lines.pop(); // empty, or an unterminated tail
      const events: StoredRelayEvent[] = [];
      for (const line of lines) {
        const e = parse(line);
        if (e && e.seq <= upTo) events.push(e);
      }
      parts.unshift(events);
    }
    this.store.events = parts.flat().slice(-this.capacity);
  }

  /** Called for every durable event, in seq order. */
  push(e: StoredRelayEvent): void {
    // The ring never holds personal content (it outlives a forgetting): only that it is sealed or forgotten.
    this.store.push(withoutPersonal(e));
  }

  newest(n: number): StoredRelayEvent[] {
    return this.store.newest(n);
  }

  /** Events with seq > after, oldest first. */
  after(after: number, limit: number, filter: EventLogFilter = {}): Page {
    const upTo = this.durableSeq();
    const out: StoredRelayEvent[] = [];
    let more = false;
    const take = (e: StoredRelayEvent): boolean => {
      if (e.seq <= after || e.seq > upTo) return true;
      if (!matchesEventLog(e, filter)) return true;
      if (out.length === limit) {
        more = true;
        return false;
      }
      out.push(e);
      return true;
    };
    const ringStart = this.ring[0]?.seq ?? Infinity;
    let next = after + 1;
    if (next < ringStart) {
      this.scanForward(next, (e) => {
        if (e.seq >= ringStart) return false;
        next = e.seq + 1;
        return take(e);
      });
      if (more) return { events: out, more };
    }
    for (const e of this.ring) if (e.seq >= next && !take(e)) break;
    return { events: out, more };
  }

  /** Events with seq < before (default: all), newest first. */
  before(before: number | undefined, limit: number, filter: EventLogFilter = {}): Page {
    const upTo = this.durableSeq();
    const bound = Math.min(before ?? Infinity, upTo + 1);
    const out: StoredRelayEvent[] = [];
    for (let i = this.ring.length - 1; i >= 0; i--) {
      const e = this.ring[i];
      if (e.seq >= bound || !matchesEventLog(e, filter)) continue;
      if (out.length === limit) return { events: out, more: true };
      out.push(e);
    }
    const ringStart = this.ring[0]?.seq ?? bound;
    let cursor = Math.min(ringStart, bound);
    const segments = listSegments(this.dir);
    for (let i = segments.length - 1; i >= 0 && cursor > 1; i--) {
      if (segments[i].firstSeq >= cursor) continue;
      const batch: StoredRelayEvent[] = [];
      scanLines(path.join(this.dir, segments[i].file), (line) => {
        const seq = seqOf(line);
        if (seq === null || seq >= cursor) return;
        const e = parse(line);
        if (e && matchesEventLog(e, filter)) batch.push(e);
      });
      for (let j = batch.length - 1; j >= 0; j--) {
        if (out.length === limit) return { events: out, more: true };
        out.push(batch[j]);
      }
      cursor = segments[i].firstSeq;
    }
    return { events: out, more: false };
  }

  /** Streams every line from seq `from` on (files only), until `each` returns false. */
  private scanForward(from: number, each: (e: StoredRelayEvent) => boolean): void {
    const segments = listSegments(this.dir);
    let idx = 0;
    for (let i = 0; i < segments.length; i++) if (segments[i].firstSeq <= from) idx = i;
    try {
      for (let i = idx; i < segments.length; i++) {
        scanLines(path.join(this.dir, segments[i].file), (line) => {
          const seq = seqOf(line);
          if (seq === null || seq < from) return;
          const e = parse(line);
          if (e && !each(e)) throw STOP;
        });
      }
    } catch (err) {
      if (err !== STOP) throw err;
    }
  }
}

function seqOf(line: string): number | null {
  const m = SEQ_RE.exec(line);
  return m ? Number(m[1]) : null;
}

export function parse(line: string): StoredRelayEvent | null {
  if (jsonDepthExceeds(line, MAX_FILE_JSON_DEPTH)) return null;
  try {
    return JSON.parse(line) as StoredRelayEvent;
  } catch {
    return null;
  }
}
