import type { StoredEvent } from '../event';
import { GroupCommitStore, type Batch } from '../group-commit';
import type { EventStore, OpenOptions, OpenResult, RecordedCut, Snapshot, SnapshotPort } from '../event-store';
import { openSnapshot, sealSnapshot, type SnapshotCipher } from '../snapshot-seal';
import { connectPg, isUndefinedTable, LazyPgConnection, pgReason, redactPgUrl, TABLE, type PgClient } from './pg-connection';
import { takeWriterLock } from './pg-lock';
import { INSERT_ROWS, walkPgLog } from './pg-read';
import { cutOfBatch, DELETE_CUT_SQL } from './pg-prune';
import { migrate } from './pg-schema';

export type PgEventStoreOptions = {
  url: string;
  onDurable: (events: readonly StoredEvent[]) => void;
  /** Called when the store can no longer write (the relay must stop: state ran ahead of the database). */
  onFatal?: (error: Error) => void;
};

/** The channel a batch's commit notifies (its payload: the batch's last seq), so `events tail -f` wakes at once. */
export const APPEND_CHANNEL = 'svc_relay_events';

// One statement is one transaction: the whole batch commits, or none of it (no torn batch to cut).
const APPEND_SQL = `WITH ins AS (${INSERT_ROWS} RETURNING seq)
SELECT pg_notify('${APPEND_CHANNEL}', max(seq)::text) FROM ins`;

/**
 * The EventStore on PostgreSQL: the same records (the exact line the file log would hold), seq and hash
 * chain; one connection that holds the writer's advisory lock for the relay's life and commits each
 * group-committed batch as one transaction. Durable means committed (the server's WAL flush, with its
 * default synchronous_commit).
 */
export class PgEventStore extends GroupCommitStore implements EventStore {
  private client: PgClient | null = null;
  private closing = false;
  private cut: RecordedCut | undefined;
  readonly location: string;
  readonly kind = 'postgres';

  constructor(private readonly options: PgEventStoreOptions) {
    super(options);
    this.location = redactPgUrl(options.url);
  }

  protected get writable(): boolean {
    return this.client !== null;
  }

  async open(opts: OpenOptions): Promise<OpenResult> {
    const client = await connectPg(this.options.url, 'writer');
    // The session holds the lock: once it is gone another relay may write, so this one must stop.
    client.on('error', (err) => this.lost(err));
    try {
      // Before anything is read or written (a migration is a write): one writer per log.
      await takeWriterLock(client, this.location);
      await migrate(client);
      const walk = await walkPgLog(client, opts);
      this.seq = walk.lastSeq;
      this.hash = walk.lastHash;
      this.cut = walk.cut;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
    return { lastSeq: this.seq, lastHash: this.hash, ...(this.cut ? { cut: this.cut } : {}) };
  }

  async close(): Promise<void> {
    await this.drain().catch(() => undefined);
    this.closing = true;
    const client = this.client;
    this.client = null;
    // Ending the session releases the advisory lock.
    if (client) await client.end().catch(() => undefined);
  }

  /** A snapshot store on its own connection (a snapshot of many MiB must not hold up a commit). */
  snapshots(mac: (text: string) => string, cipher?: SnapshotCipher): PgSnapshotStore {
    return new PgSnapshotStore(this.options.url, mac, 2, cipher);
  }

  /** One INSERT (one transaction) per batch; appends that arrive during the commit form the next batch. */
  protected async writeBatch(batch: Batch): Promise<void> {
    const columns = { seqs: [] as number[], types: [] as string[], actors: [] as string[], ats: [] as string[] };
    for (const e of batch.events) {
      columns.seqs.push(e.seq);
      columns.ats.push(e.at);
      columns.types.push(e.type);
      columns.actors.push(e.actor);
    }
    const append = {
      name: 'svc-append',
      text: APPEND_SQL,
      values: [columns.seqs, columns.ats, columns.types, columns.actors, JSON.stringify(batch.lines)],
    };
    const cutSeq = cutOfBatch(batch.events);
    try {
      if (cutSeq === null) await this.client!.query(append);
      else await this.appendWithCut(append, cutSeq);
    } catch (err) {
      throw new Error(`event log write failed: ${pgReason(err)}`);
    }
  }

  /**
   * A batch holding a `log.pruned` record: the record is appended and the rows up to its cut deleted in one
   * transaction, so the log never holds the record without the cut nor lacks rows without the record.
   */
  private async appendWithCut(append: { name: string; text: string; values: unknown[] }, cutSeq: number): Promise<void> {
    const c = this.client!;
    await c.query('BEGIN');
    try {
      await c.query(append);
      await c.query(DELETE_CUT_SQL, [cutSeq]);
      await c.query('COMMIT');
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  private lost(err: Error): void {
    if (this.closing || this.failed) return;
    this.fail(new Error(`event store connection lost (${this.location}): ${pgReason(err)}`), null);
  }
}

/** Projection snapshots in a table beside the log, MAC'd like the files; the newest two are kept. */
export class PgSnapshotStore implements SnapshotPort {
  // A lost snapshot connection is made again on the next write (snapshots are an optimisation).
  private readonly conn: LazyPgConnection;

  constructor(
    url: string,
    private readonly mac: (text: string) => string,
    private readonly keep = 2,
    private readonly cipher?: SnapshotCipher,
  ) {
    this.conn = new LazyPgConnection(url, 'snapshots');
  }

  async latest<M>(): Promise<Snapshot<M> | null> {
    const client = await this.conn.get();
    let rows: Array<{ body: string; mac: string }>;
    try {
      rows = (await client.query<{ body: string; mac: string }>(`SELECT body, mac FROM ${TABLE.snapshots} ORDER BY seq DESC LIMIT 5`)).rows;
    } catch (err) {
      if (isUndefinedTable(err)) return null; // a database no relay has written yet
      throw err;
    }
    for (const row of rows) {
      try {
        const snap = openSnapshot<M>(row.body, row.mac, this.mac, this.cipher);
        if (snap) return snap;
      } catch {
        // an unreadable snapshot is skipped; the log is the truth and a full replay still works
      }
    }
    return null;
  }

  write<M>(snapshot: Snapshot<M>): Promise<void> {
    const { at, body, mac } = sealSnapshot(snapshot, this.mac, this.cipher);
    return this.store(snapshot.seq, at, body, mac);
  }

  /** Removes every snapshot (after a forgetting: none may keep what it forgot). */
  async clear(): Promise<void> {
    const client = await this.conn.get();
    try {
      await client.query(`DELETE FROM ${TABLE.snapshots}`);
      await client.query(`VACUUM ${TABLE.snapshots}`);
    } catch (err) {
      if (!isUndefinedTable(err)) throw err;
    }
  }

  close(): Promise<void> {
    return this.conn.close();
  }

  private async store(seq: number, at: string, body: string, mac: string): Promise<void> {
    const client = await this.conn.get();
    await client.query(
      `INSERT INTO ${TABLE.snapshots} (seq, at, body, mac) VALUES ($1, $2, $3, $4) ON CONFLICT (seq) DO UPDATE SET at = $2, body = $3, mac = $4`,
      [seq, at, body, mac],
    );
    await client.query(`DELETE FROM ${TABLE.snapshots} WHERE seq NOT IN (SELECT seq FROM ${TABLE.snapshots} ORDER BY seq DESC LIMIT $1)`, [
      this.keep,
    ]);
  }
}
