import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { encodeRecord } from '../chain';
import { GENESIS_HASH, type StoredEvent } from '../event';
import { ChainError } from '../event-store';
import { FileEventStore } from './file-event-store';
import { listSegments, scanLog, segmentName, verifyLog } from './file-read';

jest.mock('node:fs', () => {
  const real = jest.requireActual<typeof import('node:fs')>('node:fs');
  return {
    ...real,
    fdatasync: jest.fn((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => real.fdatasync(fd, cb)),
    writeSync: jest.fn((...args: unknown[]) => (real.writeSync as (...a: unknown[]) => number)(...args)),
  };
});
const fdatasync = fs.fdatasync as unknown as jest.Mock;
const writeSync = fs.writeSync as unknown as jest.Mock;

const AT = '2026-03-01T00:00:00.000Z';

/** A toy projection: the fold of every event, so two replays can be compared. */
class Fold {
  seqs: number[] = [];
  sum = 0;
  apply(e: StoredEvent) {
    this.seqs.push(e.seq);
    this.sum += (e.data as { n: number }).n;
  }
}

describe('FileEventStore', () => {
  let dir: string;
  const batches: StoredEvent[][] = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-store-'));
    batches.length = 0;
    fdatasync.mockClear();
    writeSync.mockClear();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function openStore(opts: { segmentBytes?: number; fromSeq?: number; expectPrev?: string; onEvent?: (e: StoredEvent) => void } = {}) {
    const store = new FileEventStore({ dir, segmentBytes: opts.segmentBytes, onDurable: (b) => batches.push([...b]) });
    const opened = await store.open({ fromSeq: opts.fromSeq ?? 1, expectPrev: opts.expectPrev, onEvent: opts.onEvent ?? (() => undefined) });
    return { store, opened };
  }
  const ev = (n: number) => ({ type: 'test.counted', data: { n } });

  it('stamps seq and the hash chain at once, durable after, file 0600', async () => {
    const { store } = await openStore();
    const a = store.append([ev(1), ev(2)], AT, 'system');
    expect(a.stored.map((e) => e.seq)).toEqual([1, 2]);
    expect(a.stored[0].prev).toBe(GENESIS_HASH);
    expect(a.stored[1].prev).toBe(a.stored[0].hash);
    await a.durable;
    await store.close();
    const file = path.join(dir, segmentName(1));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(
      fs
        .readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).seq),
    ).toEqual([1, 2]);
  });

  it('group commit: concurrent appends share one write and one fdatasync', async () => {
    const { store } = await openStore();
    const appended = Array.from({ length: 200 }, (_, i) => store.append([ev(i)], AT, 'system'));
    await Promise.all(appended.map((a) => a.durable));
    expect(fdatasync).toHaveBeenCalledTimes(1);
    expect(batches).toHaveLength(1);
    expect(batches[0].map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    await store.close();
  });

  it('appends during a flush form the next batch; durable batches are reported in seq order', async () => {
    const { store } = await openStore();
    const first = store.append([ev(1)], AT, 'system');
    await new Promise((r) => setImmediate(r)); // the flush has started
    const later = Array.from({ length: 50 }, (_, i) => store.append([ev(i)], AT, 'system'));
    await Promise.all([first.durable, ...later.map((a) => a.durable)]);
    expect(fdatasync.mock.calls.length).toBeLessThanOrEqual(3);
    expect(batches.flat().map((e) => e.seq)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    await store.close();
  });

  it('reopens where it left off and keeps the chain', async () => {
    const { store } = await openStore();
    await store.append([ev(1), ev(2)], AT, 'system').durable;
    await store.close();
    const fold = new Fold();
    const { store: again, opened } = await openStore({ onEvent: (e) => fold.apply(e) });
    expect(opened.lastSeq).toBe(2);
    expect(fold.seqs).toEqual([1, 2]);
    const next = again.append([ev(3)], AT, 'system');
    expect(next.stored[0]).toMatchObject({ seq: 3, prev: opened.lastHash });
    await next.durable;
    await again.close();
    expect(verifyLog(dir)).toMatchObject({ ok: true, lastSeq: 3 });
  });

  it('a torn last line is cut at open and reported; the chain then continues cleanly', async () => {
    const { store } = await openStore();
    const a = store.append([ev(1), ev(2)], AT, 'system');
    await a.durable;
    await store.close();
    const file = path.join(dir, segmentName(1));
    const size = fs.statSync(file).size;
    const torn = encodeRecord({ seq: 3, id: 'x', at: AT, type: 't', actor: 's', data: {}, v: 1, prev: a.stored[1].hash }).line.slice(0, 57);
    fs.appendFileSync(file, torn);
    const { store: again, opened } = await openStore();
    expect(opened).toMatchObject({ lastSeq: 2, recovered: { segment: segmentName(1), droppedBytes: 57 } });
    expect(fs.statSync(file).size).toBe(size);
    await again.append([ev(3)], AT, 'system').durable;
    await again.close();
    expect(verifyLog(dir)).toMatchObject({ ok: true, lastSeq: 3, tornTailBytes: 0 });
  });

  it('one flipped byte in the middle: ChainError naming that seq, at open and from verifyLog', async () => {
    const { store } = await openStore();
    await store.append(
      Array.from({ length: 9 }, (_, i) => ev(i)),
      AT,
      'system',
    ).durable;
    await store.close();
    const file = path.join(dir, segmentName(1));
    const buf = fs.readFileSync(file);
    const lines = buf.toString('utf8').split('\n');
    const offset = lines.slice(0, 4).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) + 30; // inside record 5
    buf[offset] ^= 0x04;
    fs.writeFileSync(file, buf);
    expect(verifyLog(dir)).toEqual({ ok: false, seq: 5, segment: segmentName(1), reason: 'checksum mismatch' });
    const s = new FileEventStore({ dir, onDurable: () => undefined });
    await expect(s.open({ fromSeq: 1, onEvent: () => undefined })).rejects.toThrow(ChainError);
    await expect(s.open({ fromSeq: 1, onEvent: () => undefined })).rejects.toMatchObject({ seq: 5 });
  });

  it('snapshot + rest == full replay, and a snapshot that does not match the log is refused', async () => {
    const { store } = await openStore();
    const stored = store.append(
      Array.from({ length: 20 }, (_, i) => ev(i * i)),
      AT,
      'system',
    ).stored;
    await store.drain();
    await store.close();
    const full = new Fold();
    scanLog(dir, { fromSeq: 1, onEvent: (e) => full.apply(e) });
    for (const k of [0, 1, 7, 19, 20]) {
      const part = new Fold();
      for (const e of stored.slice(0, k)) part.apply(e); // "the snapshot"
      const { store: s } = await openStore({ fromSeq: k + 1, expectPrev: k ? stored[k - 1].hash : undefined, onEvent: (e) => part.apply(e) });
      await s.close();
      expect({ k, seqs: part.seqs, sum: part.sum }).toEqual({ k, seqs: full.seqs, sum: full.sum });
    }
    const wrong = new FileEventStore({ dir, onDurable: () => undefined });
    await expect(wrong.open({ fromSeq: 11, expectPrev: 'f'.repeat(64), onEvent: () => undefined })).rejects.toMatchObject({
      seq: 10,
      reason: 'the snapshot does not match this record',
    });
    const ahead = new FileEventStore({ dir, onDurable: () => undefined });
    await expect(ahead.open({ fromSeq: 30, expectPrev: 'f'.repeat(64), onEvent: () => undefined })).rejects.toThrow(/before the snapshot/);
  });

  it('rotates into segments that chain across files; replay and verify span them', async () => {
    const { store } = await openStore({ segmentBytes: 600 });
    for (let i = 0; i < 12; i++) await store.append([ev(i)], AT, 'system').durable;
    await store.close();
    const segs = listSegments(dir);
    expect(segs.length).toBeGreaterThan(2);
    expect(segs[0].firstSeq).toBe(1);
    expect(verifyLog(dir)).toMatchObject({ ok: true, lastSeq: 12, segments: segs.length });
    const fold = new Fold();
    const { store: again } = await openStore({ segmentBytes: 600, onEvent: (e) => fold.apply(e) });
    await again.close();
    expect(fold.seqs).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });

  it('a log whose oldest segment is gone is refused by verify, replay and open, even from a snapshot', async () => {
    const { store } = await openStore({ segmentBytes: 600 });
    for (let i = 0; i < 12; i++) await store.append([ev(i)], AT, 'system').durable;
    await store.close();
    const [head, second] = listSegments(dir);
    fs.rmSync(path.join(dir, head.file));
    const reason = `the log does not start at seq 1: its oldest segment starts at seq ${second.firstSeq}, so the records before it are missing (and no recorded cut says they were pruned)`;
    expect(verifyLog(dir)).toEqual({ ok: false, seq: 1, segment: second.file, reason });
    expect(() => scanLog(dir, { fromSeq: 1 })).toThrow(reason);
    const fromStart = new FileEventStore({ dir, onDurable: () => undefined });
    await expect(fromStart.open({ fromSeq: 1, onEvent: () => undefined })).rejects.toMatchObject({ seq: 1, reason });
    // A snapshot would let start-up skip the head; the missing head is still refused.
    const fromSnapshot = new FileEventStore({ dir, onDurable: () => undefined });
    await expect(fromSnapshot.open({ fromSeq: 12, onEvent: () => undefined })).rejects.toMatchObject({ seq: 1, reason });
  });

  it('an unterminated line in an older segment is corruption, not a torn write', async () => {
    const { store } = await openStore({ segmentBytes: 600 });
    for (let i = 0; i < 12; i++) await store.append([ev(i)], AT, 'system').durable;
    await store.close();
    const first = path.join(dir, listSegments(dir)[0].file);
    fs.appendFileSync(first, '{"seq":');
    expect(verifyLog(dir)).toMatchObject({ ok: false, reason: 'unterminated record inside the log' });
  });

  it('a write failure rejects every waiter and calls onFatal; later appends are refused', async () => {
    const fatal = jest.fn();
    const store = new FileEventStore({ dir, onDurable: () => undefined, onFatal: fatal });
    await store.open({ fromSeq: 1, onEvent: () => undefined });
    fdatasync.mockImplementationOnce((_fd: number, cb: (e: Error) => void) => cb(Object.assign(new Error('EIO: disk on fire'), { code: 'EIO' })));
    const a = store.append([ev(1)], AT, 'system');
    const b = store.append([ev(2)], AT, 'system');
    await expect(a.durable).rejects.toThrow(/event log write failed: EIO/);
    await expect(b.durable).rejects.toThrow(/EIO/);
    expect(fatal).toHaveBeenCalledTimes(1);
    await expect(store.append([ev(3)], AT, 'system').durable).rejects.toThrow(/EIO/);
    await store.close();
  });

  it('a full disk on write (ENOSPC) fails the batch the same way, and nothing of it is acknowledged', async () => {
    const fatal = jest.fn();
    const durable: number[] = [];
    const store = new FileEventStore({ dir, onDurable: (b) => durable.push(...b.map((e) => e.seq)), onFatal: fatal });
    await store.open({ fromSeq: 1, onEvent: () => undefined });
    await store.append([ev(1)], AT, 'system').durable;
    writeSync.mockImplementationOnce(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    });
    const a = store.append([ev(2), ev(3)], AT, 'system');
    await expect(a.durable).rejects.toThrow(/event log write failed: ENOSPC/);
    expect(fatal).toHaveBeenCalledTimes(1);
    expect(durable).toEqual([1]);
    await store.close();
    // The log on disk still holds exactly the acknowledged event, and verifies.
    expect(verifyLog(dir)).toMatchObject({ ok: true, lastSeq: 1 });
  });

  it('a short write is completed: the batch lands whole, in one fdatasync', async () => {
    const { store } = await openStore();
    const real = jest.requireActual<typeof import('node:fs')>('node:fs');
    // The first write call takes only 10 bytes; the store must write the rest before syncing.
    writeSync.mockImplementationOnce((fd: number, buf: Buffer, off: number) => real.writeSync(fd, buf, off, 10));
    await Promise.all([store.append([ev(1)], AT, 'system').durable, store.append([ev(2)], AT, 'system').durable]);
    expect(writeSync.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(fdatasync).toHaveBeenCalledTimes(1);
    await store.close();
    expect(verifyLog(dir)).toMatchObject({ ok: true, lastSeq: 2 });
  });

  it('a chain-valid record nested past the file limit stops the replay with a ChainError, not a stack overflow', () => {
    const first = encodeRecord({ seq: 1, id: 'a', at: AT, type: 't', actor: 's', data: { n: 1 }, v: 1, prev: GENESIS_HASH });
    let deep: unknown = 1;
    for (let i = 0; i < 300; i++) deep = [deep];
    const forged = encodeRecord({ seq: 2, id: 'b', at: AT, type: 't', actor: 's', data: { n: deep }, v: 1, prev: first.hash });
    fs.writeFileSync(path.join(dir, segmentName(1)), `${first.line}\n${forged.line}\n`);
    const seen: number[] = [];
    expect(() => scanLog(dir, { fromSeq: 1, onEvent: (e) => seen.push(e.seq) })).toThrow(ChainError);
    expect(() => scanLog(dir, { fromSeq: 1, onEvent: () => undefined })).toThrow(
      /seq 2.*nests JSON deeper than 256 levels|nests JSON deeper than 256 levels/,
    );
    expect(seen).toEqual([1]);
  });
});
