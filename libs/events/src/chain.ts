import { hash as digestOnce, randomUUID } from 'node:crypto';
import type { NewEvent, StoredEvent } from './event';
import { eventSchemas } from './event-schema';

const HASH_KEY = ',"hash":"';
const HASH_TAIL_LENGTH = HASH_KEY.length + 64 + 2; // ,"hash":"<64 hex>"}

/**
 * One record, one line: the JSON of every field but `hash`, with `,"hash":"<sha256 of that JSON>"`
 * spliced in before the closing brace. Verifying a line needs no JSON parse: cut the tail, hash the rest.
 */
export function encodeRecord(fields: Omit<StoredEvent, 'hash'>): { line: string; hash: string } {
  const core = JSON.stringify({
    seq: fields.seq,
    id: fields.id,
    at: fields.at,
    type: fields.type,
    actor: fields.actor,
    data: fields.data,
    v: fields.v,
    prev: fields.prev,
  });
  const hash = sha256(core);
  return { line: core.slice(0, -1) + HASH_KEY + hash + '"}', hash };
}

export type LineCheck = { ok: true; seq: number; prev: string; hash: string } | { ok: false; reason: string };

/** Checks one line's own checksum and extracts seq/prev/hash without a full parse. */
export function checkLine(line: string): LineCheck {
  if (line.length < HASH_TAIL_LENGTH + 2 || !line.endsWith('"}')) return { ok: false, reason: 'malformed record' };
  const tailAt = line.length - HASH_TAIL_LENGTH;
  if (line.slice(tailAt, tailAt + HASH_KEY.length) !== HASH_KEY) return { ok: false, reason: 'missing hash' };
  const hash = line.slice(tailAt + HASH_KEY.length, line.length - 2);
  const core = line.slice(0, tailAt) + '}';
  if (sha256(core) !== hash) return { ok: false, reason: 'checksum mismatch' };
  const seq = leadingSeq(line);
  const prevAt = line.lastIndexOf('"prev":"', tailAt);
  if (seq < 0 || prevAt < 0) return { ok: false, reason: 'malformed record' };
  return { ok: true, seq, prev: line.slice(prevAt + 8, prevAt + 8 + 64), hash };
}

const SEQ_KEY = '{"seq":';

/** The n of a line starting `{"seq":<n>,` (at most 15 digits), or -1. */
function leadingSeq(line: string): number {
  if (!line.startsWith(SEQ_KEY)) return -1;
  let n = 0;
  let i = SEQ_KEY.length;
  for (; i < line.length && i < SEQ_KEY.length + 16; i++) {
    const d = line.charCodeAt(i) - 48;
    if (d < 0 || d > 9) break;
    n = n * 10 + d;
  }
  return i > SEQ_KEY.length && i < SEQ_KEY.length + 16 && line.charCodeAt(i) === 44 ? n : -1;
}

/** One-shot `crypto.hash` (engines: Node >= 20.19): half the cost of createHash().update().digest() on a record. */
export function sha256(text: string): string {
  return digestOnce('sha256', text, 'hex');
}

/**
 * Puts events on the chain after `head` (the last record's seq and hash): each gets the next seq, an id,
 * the time, its actor and the links, and is encoded as its record line. Both stores append with this.
 */
export function stampRecords(
  events: readonly NewEvent[],
  at: string,
  defaultActor: string,
  head: { seq: number; hash: string },
): { stored: StoredEvent[]; lines: string[]; seq: number; hash: string } {
  const stored: StoredEvent[] = [];
  const lines: string[] = [];
  let { seq, hash } = head;
  for (const e of events) {
    const fields = {
      seq: seq + 1,
      id: randomUUID(),
      at,
      type: e.type,
      actor: e.actor ?? defaultActor,
      data: e.data,
      v: eventSchemas.versionOf(e.type),
      prev: hash,
    };
    const record = encodeRecord(fields);
    seq = fields.seq;
    hash = record.hash;
    lines.push(record.line);
    stored.push({ ...fields, hash });
  }
  return { stored, lines, seq, hash };
}
