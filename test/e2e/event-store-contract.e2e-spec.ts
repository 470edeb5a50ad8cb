import {
  ChainError,
  copyLog,
  encodeRecord,
  FileEventStore,
  listSegments,
  LogLockedError,
  migrate,
  openLogSource,
  PgEventStore,
  PgLogLockedError,
  SchemaTooNewError,
  segmentName,
  SnapshotStore,
  verifySource,
  type EventStore,
  type SnapshotPort,
  type StoredEvent,
} from '@svc/events';
import { createHmac } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { dbOf, usePostgres } from '../support/postgres';

/**
 * One contract, two adapters (issue 16): whatever holds the log, the relay sees the same store. The
 * PostgreSQL run is a real server started for this file (test/support/postgres.ts), no mock.
 */
const AT = '2026-03-01T00:00:00.000Z';
const ev = (n: number) => ({ type: 'test.counted', data: { n } });
const mac = (t: string) => createHmac('sha256', 'k').update(t).digest('hex');

class Fold {
  seqs: number[] = [];
  sum = 0;
  apply(e: StoredEvent) {
    this.seqs.push(e.seq);
    this.sum += (e.data as { n: number }).n;
  }
}

type Adapter = {
  name: 'file' | 'postgres';
  fresh(): Promise<string>;
  store(loc: string, onDurable: (b: readonly StoredEvent[]) => void, onFatal?: (e: Error) => void): EventStore;
  snapshots(loc: string, macOf?: (t: string) => string): SnapshotPort;
  /** A writer that died in the middle of a batch: `whole` records written whole, then one cut short. */
  crashMidBatch(loc: string, whole: string[], cut: string): Promise<void>;
  /** What a crash mid-batch leaves readable: the whole records (a line at a time) or none (one transaction). */
  keepsWholeRecordsOfATornBatch: boolean;
  tamper(loc: string, seq: number, edit: (record: string) => string): Promise<void>;
  remove(loc: string, seq: number): Promise<void>;
  lockError: new (...args: never[]) => Error;
};

const pg = usePostgres();
const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) fs.rmSync(d, { recursive: true, force: true });
});

const mkdir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-contract-'));
  tmp.push(d);
  return d;
};
const segmentFile = (dir: string) => path.join(dir, listSegments(dir).at(-1)!.file);

const fileAdapter: Adapter = {
  name: 'file',
  fresh: async () => path.join(mkdir(), 'events'),
  store: (dir, onDurable, onFatal) => new FileEventStore({ dir, onDurable, onFatal }),
  snapshots: (dir, macOf = mac) => new SnapshotStore(path.join(path.dirname(dir), 'snapshots'), macOf),
  async crashMidBatch(dir, whole, cut) {
    fs.appendFileSync(segmentFile(dir), whole.map((l) => l + '\n').join('') + cut.slice(0, Math.floor(cut.length / 2)));
  },
  keepsWholeRecordsOfATornBatch: true,
  async tamper(dir, seq, edit) {
    const file = segmentFile(dir);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines[seq - 1] = edit(lines[seq - 1]);
    fs.writeFileSync(file, lines.join('\n'));
  },
  async remove(dir, seq) {
    const file = segmentFile(dir);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.splice(seq - 1, 1);
    fs.writeFileSync(file, lines.join('\n'));
  },
  lockError: LogLockedError,
};

const pgAdapter: Adapter = {
  name: 'postgres',
  fresh: () => pg.createDatabase(),
  store: (url, onDurable, onFatal) => new PgEventStore({ url, onDurable, onFatal }),
  snapshots: (url, macOf = mac) => new PgEventStore({ url, onDurable: () => undefined }).snapshots(macOf),
  async crashMidBatch(url, whole, cut) {
    const c = new Client({ connectionString: url });
    await c.connect();
    c.on('error', () => undefined);
    await c.query('BEGIN');
    for (const r of [...whole, cut]) {
      const o = JSON.parse(r) as StoredEvent;
      await c.query('INSERT INTO svc_relay_events (seq, at, type, actor, record) VALUES ($1, $2, $3, $4, $5)', [o.seq, o.at, o.type, o.actor, r]);
    }
    // The process dies before COMMIT: its socket closes under the server.
    (c as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await new Promise((r) => setTimeout(r, 200));
  },
  keepsWholeRecordsOfATornBatch: false,
  async tamper(url, seq, edit) {
    const rows = await pg.query(dbOf(url), 'SELECT record FROM svc_relay_events WHERE seq = $1', [seq]);
    await pg.query(dbOf(url), 'UPDATE svc_relay_events SET record = $2 WHERE seq = $1', [seq, edit(rows[0].record as string)]);
  },
  async remove(url, seq) {
    await pg.query(dbOf(url), 'DELETE FROM svc_relay_events WHERE seq = $1', [seq]);
  },
  lockError: PgLogLockedError,
};

describe.each([fileAdapter, pgAdapter])('EventStore contract: $name', (adapter) => {
  let loc: string;
  let batches: StoredEvent[][];
  const open: EventStore[] = [];
  beforeEach(async () => {
    loc = await adapter.fresh();
    batches = [];
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });

  async function openStore(opts: { fromSeq?: number; expectPrev?: string; onEvent?: (e: StoredEvent) => void; onFatal?: (e: Error) => void } = {}) {
    const store = adapter.store(loc, (b) => batches.push([...b]), opts.onFatal);
    const opened = await store.open({ fromSeq: opts.fromSeq ?? 1, expectPrev: opts.expectPrev, onEvent: opts.onEvent ?? (() => undefined) });
    open.push(store);
    return { store, opened };
  }
  async function closeAll() {
    for (const s of open.splice(0)) await s.close();
  }
  /** Records 1..n written and closed; returns their hashes by seq. */
  async function seed(n: number): Promise<string[]> {
    const { store } = await openStore();
    const stored = store.append(
      Array.from({ length: n }, (_, i) => ev(i + 1)),
      AT,
      'system',
    );
    await stored.durable;
    await closeAll();
    return ['', ...stored.stored.map((e) => e.hash)];
  }

  it('stamps seq and the hash chain at once; durable after; a reopen resumes the chain', async () => {
    const { store } = await openStore();
    const a = store.append([ev(1), ev(2)], AT, 'system');
    expect(a.stored.map((e) => e.seq)).toEqual([1, 2]);
    expect(a.stored[1].prev).toBe(a.stored[0].hash);
    expect(store.lastSeq).toBe(2);
    await a.durable;
    expect(batches.flat().map((e) => e.seq)).toEqual([1, 2]);
    await closeAll();
    const { store: again, opened } = await openStore();
    expect(opened).toMatchObject({ lastSeq: 2, lastHash: a.stored[1].hash });
    const b = again.append([ev(3)], AT, 'operator');
    expect(b.stored[0].prev).toBe(a.stored[1].hash);
    await b.durable;
    expect((await verifySource(openLogSource(loc))).ok).toBe(true);
  });

  it('group commit: 200 concurrent appends become one durable batch', async () => {
    const { store } = await openStore();
    const appended = Array.from({ length: 200 }, (_, i) => store.append([ev(i)], AT, 'system'));
    await Promise.all(appended.map((a) => a.durable));
    expect(batches).toHaveLength(1);
    expect(batches[0].map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
  });

  it('appends made while a batch commits form the next one; batches are reported in seq order', async () => {
    const { store } = await openStore();
    const first = store.append([ev(1)], AT, 'system');
    await new Promise((r) => setImmediate(r)); // the first batch is now committing
    const later = Array.from({ length: 50 }, (_, i) => store.append([ev(i + 2)], AT, 'system'));
    await Promise.all([first.durable, ...later.map((a) => a.durable)]);
    expect(batches.length).toBeGreaterThanOrEqual(2);
    expect(batches.flat().map((e) => e.seq)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
  });

  it('a crash in the middle of a batch: the store opens at a whole record and the chain goes on from it', async () => {
    const hashes = await seed(3);
    const next = (seq: number, prev: string) =>
      encodeRecord({ seq, id: `crash-${seq}`, at: AT, type: 'test.counted', actor: 'system', data: { n: seq }, v: 1, prev });
    const r4 = next(4, hashes[3]);
    const r5 = next(5, r4.hash);
    const r6 = next(6, r5.hash);
    await adapter.crashMidBatch(loc, [r4.line, r5.line], r6.line);
    const { store, opened } = await openStore();
    const kept = adapter.keepsWholeRecordsOfATornBatch ? 5 : 3;
    expect(opened.lastSeq).toBe(kept);
    expect(opened.lastHash).toBe(adapter.keepsWholeRecordsOfATornBatch ? r5.hash : hashes[3]);
    if (adapter.keepsWholeRecordsOfATornBatch) expect(opened.recovered?.droppedBytes).toBeGreaterThan(0);
    const a = store.append([ev(9)], AT, 'system');
    expect(a.stored[0].seq).toBe(kept + 1);
    await a.durable;
    await closeAll();
    const report = await verifySource(openLogSource(loc));
    expect(report).toMatchObject({ ok: true, lastSeq: kept + 1 });
  });

  it('verify and open name the first bad record: an edited one, and one removed', async () => {
    await seed(6);
    await adapter.tamper(loc, 3, (r) => r.replace('"n":3', '"n":300'));
    expect(await verifySource(openLogSource(loc))).toMatchObject({ ok: false, seq: 3, reason: 'checksum mismatch' });
    await expect(openStore()).rejects.toMatchObject({ name: 'ChainError', seq: 3 });
    await adapter.tamper(loc, 3, (r) => r.replace('"n":300', '"n":3'));
    expect((await verifySource(openLogSource(loc))).ok).toBe(true);
    await adapter.remove(loc, 2);
    expect(await verifySource(openLogSource(loc))).toMatchObject({ ok: false, seq: 3, reason: 'expected seq 2' });
  });

  it('replay equals live state, from seq 1 and from a snapshot (whose hash must match its record)', async () => {
    const live = new Fold();
    const { store } = await openStore();
    for (let i = 1; i <= 300;) {
      const n = 1 + (i % 7);
      const a = store.append(
        Array.from({ length: n }, (_, k) => ev(i + k)),
        AT,
        'system',
      );
      i += n;
      if (i % 3 === 0) await a.durable;
    }
    await store.drain();
    for (const e of batches.flat()) live.apply(e);
    const hashAt = new Map(batches.flat().map((e) => [e.seq, e.hash]));
    const last = store.lastSeq;
    await closeAll();

    const replayed = new Fold();
    await openStore({ onEvent: (e) => replayed.apply(e) });
    await closeAll();
    expect(replayed).toEqual(live);

    const audited = new Fold();
    await openLogSource(loc).walk({ onEvent: (e) => audited.apply(e) });
    expect(audited).toEqual(live);

    const tail = new Fold();
    await openStore({ fromSeq: 201, expectPrev: hashAt.get(200), onEvent: (e) => tail.apply(e) });
    await closeAll();
    expect(tail.seqs).toEqual(Array.from({ length: last - 200 }, (_, i) => 201 + i));
    await expect(openStore({ fromSeq: 201, expectPrev: 'f'.repeat(64) })).rejects.toMatchObject({
      seq: 200,
      reason: 'the snapshot does not match this record',
    });
    await expect(openStore({ fromSeq: last + 5, expectPrev: 'f'.repeat(64) })).rejects.toBeInstanceOf(ChainError);
  });

  it('one writer: a second store on the same log is refused before it writes, and opens once the first closes', async () => {
    await seed(2);
    const { store } = await openStore();
    const second = adapter.store(loc, () => undefined);
    await expect(second.open({ fromSeq: 1, onEvent: () => undefined })).rejects.toBeInstanceOf(adapter.lockError);
    await store.append([ev(3)], AT, 'system').durable;
    await closeAll();
    const { opened } = await openStore();
    expect(opened.lastSeq).toBe(3);
  });

  it('snapshots: the newest one whose MAC holds (one forged without the key is skipped)', async () => {
    await seed(1);
    const snaps = adapter.snapshots(loc);
    expect(await snaps.latest()).toBeNull();
    await snaps.write({ seq: 1, hash: 'h1', at: AT, models: { a: 1 } });
    await snaps.write({ seq: 5, hash: 'h5', at: AT, models: { a: 5 } });
    expect(await snaps.latest()).toEqual({ seq: 5, hash: 'h5', at: AT, models: { a: 5 } });
    const forger = adapter.snapshots(loc, (t) => createHmac('sha256', 'not-the-key').update(t).digest('hex'));
    await forger.write({ seq: 9, hash: 'h9', at: AT, models: { a: 'forged' } });
    expect(await snaps.latest()).toMatchObject({ seq: 5, models: { a: 5 } });
    await forger.close?.();
    await snaps.close?.();
  });

  it('copies to the other store and back record for record, proven on arrival', async () => {
    const hashes = await seed(40);
    const other = adapter.name === 'file' ? await pgAdapter.fresh() : path.join(mkdir(), 'events');
    const there = await copyLog(openLogSource(loc), other.startsWith('postgres') ? { kind: 'postgres', url: other } : { kind: 'dir', dir: other });
    expect(there).toMatchObject({ records: 40, lastSeq: 40, lastHash: hashes[40] });
    const back = adapter.name === 'file' ? path.join(mkdir(), 'events') : await pgAdapter.fresh();
    const again = await copyLog(openLogSource(other), back.startsWith('postgres') ? { kind: 'postgres', url: back } : { kind: 'dir', dir: back });
    expect(again.lastHash).toBe(hashes[40]);
    // A copy goes only into an empty store.
    await expect(
      copyLog(openLogSource(loc), other.startsWith('postgres') ? { kind: 'postgres', url: other } : { kind: 'dir', dir: other }),
    ).rejects.toThrow(/already holds a log/);
  });

  it('a broken log is not copied: nothing is left in the target', async () => {
    await seed(5);
    await adapter.tamper(loc, 4, (r) => r.replace('"n":4', '"n":44'));
    const dir = path.join(mkdir(), 'events');
    await expect(copyLog(openLogSource(loc), { kind: 'dir', dir })).rejects.toMatchObject({ seq: 4 });
    expect(listSegments(dir)).toEqual([]);
    const url = await pgAdapter.fresh();
    await expect(copyLog(openLogSource(loc), { kind: 'postgres', url })).rejects.toMatchObject({ seq: 4 });
    expect(await pg.query(dbOf(url), 'SELECT count(*)::int AS n FROM svc_relay_events')).toEqual([{ n: 0 }]);
  });
});

describe('PostgreSQL store only', () => {
  it('an UPDATE of a SQL column alone is caught: verify names the record', async () => {
    const url = await pg.createDatabase();
    const store = new PgEventStore({ url, onDurable: () => undefined });
    await store.open({ fromSeq: 1, onEvent: () => undefined });
    await store.append([ev(1), ev(2), ev(3)], AT, 'system').durable;
    await store.close();
    await pg.query(dbOf(url), `UPDATE svc_relay_events SET type = 'session.created' WHERE seq = 2`);
    expect(await verifySource(openLogSource(url))).toMatchObject({ ok: false, seq: 2, reason: 'the type column does not match the record' });
  });

  it('a lost connection stops the store: pending appends fail and onFatal is told (the lock went with it)', async () => {
    const url = await pg.createDatabase();
    const fatal = jest.fn();
    const store = new PgEventStore({ url, onDurable: () => undefined, onFatal: fatal });
    await store.open({ fromSeq: 1, onEvent: () => undefined });
    await store.append([ev(1)], AT, 'system').durable;
    await pg.query(
      dbOf(url),
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'svc-relay writer%' AND datname = $1`,
      [dbOf(url)],
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(fatal).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringMatching(/connection lost/) }));
    await expect(store.append([ev(2)], AT, 'system').durable).rejects.toThrow(/connection lost/);
    expect(fatal.mock.calls[0][0].message).not.toMatch(/password/);
    await store.close();
  });

  it('migrations: a version-1 database is brought up to date; a newer schema is refused', async () => {
    const url = await pg.createDatabase();
    const c = new Client({ connectionString: url });
    await c.connect();
    expect(await migrate(c, 1)).toEqual([1]);
    // 3: leader epochs; 4: svc_relay_members (issue 38).
    expect(await migrate(c)).toEqual([2, 3, 4]);
    expect(await migrate(c)).toEqual([]);
    expect((await c.query('SELECT version FROM svc_relay_schema ORDER BY version')).rows).toEqual([1, 2, 3, 4].map((version) => ({ version })));
    await c.query(`INSERT INTO svc_relay_schema (version, name) VALUES (99, 'from the future')`);
    await expect(migrate(c)).rejects.toBeInstanceOf(SchemaTooNewError);
    await c.end();
  });

  it('the records are the file log lines, byte for byte (an export of either is the same file)', async () => {
    const url = await pg.createDatabase();
    const dir = path.join(mkdir(), 'events');
    fs.mkdirSync(dir);
    let prev = '0'.repeat(64);
    const lines: string[] = [];
    for (let seq = 1; seq <= 5; seq++) {
      const r = encodeRecord({ seq, id: `id-${seq}`, at: AT, type: 'test.ünïcode', actor: 'device:ab12', data: { s: 'é😀\u0000"' }, v: 1, prev });
      lines.push(r.line);
      prev = r.hash;
    }
    fs.writeFileSync(path.join(dir, segmentName(1)), lines.join('\n') + '\n');
    await copyLog(openLogSource(dir), { kind: 'postgres', url });
    const out = path.join(mkdir(), 'export.jsonl');
    await copyLog(openLogSource(url), { kind: 'jsonl', file: out });
    expect(fs.readFileSync(out, 'utf8')).toBe(lines.join('\n') + '\n');
  });
});
