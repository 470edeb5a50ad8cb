import type { StoredEvent } from '../event';
import { GroupCommitStore, type Batch } from '../group-commit';
import type { EventStore, OpenOptions, OpenResult, RecordedCut, Snapshot, SnapshotPort } from '../event-store';
import { openSnapshot, sealSnapshot, type SnapshotCipher } from '../snapshot-seal';
import { connectPg, isUndefinedTable, LazyPgConnection, pgReason, redactPgUrl, TABLE, type PgClient } from './pg-connection';
import { takeWriterLock, tryWriterLock } from './pg-lock';
import { claimEpoch, heartbeat, holderName, PgFencedError, startLease } from './pg-leader';
import { PgFollower } from './pg-follow';
import { leaderHistory, listMembers, reportSelf, type MemberSource, type PgLeaderChange, type PgMember } from './pg-members';
import { insertRows, walkPgLog } from './pg-read';
import { cutOfBatch, DELETE_CUT_SQL } from './pg-prune';
import { migrate } from './pg-schema';

export type PgEventStoreOptions = {
  url: string;
  onDurable: (events: readonly StoredEvent[]) => void;
  /** Called when the store can no longer write (the relay must stop: state ran ahead of the database). */
  onFatal?: (error: Error) => void;
  /** Open as a hot standby: read the log without the writer's lock, then follow it (`follow`) until `takeOver`. */
  standby?: boolean;
  /** How often a standby reads the log without a notification, and asks for the lock (default 500 ms). */
  pollMs?: number;
  /** How long a leader that stopped answering keeps the lock (the server ends its idle session; default 3000 ms). */
  leaseMs?: number;
  /** A standby's followed records, in seq order (its read models); awaited before the next read. */
  onFollowed?: (events: readonly StoredEvent[]) => Promise<void>;
  /** This relay's row in svc_relay_members (pg-members.ts), written by the heartbeat and the follow loop. */
  member?: MemberSource;
};

export type PgRole = { role: 'leader' | 'standby'; epoch: number | null; lag: { records: number; ms: number } | null };

/** The channel a batch's commit notifies (its payload: the batch's last seq), so `events tail -f` wakes at once. */
export const APPEND_CHANNEL = 'svc_relay_events';

// One statement is one transaction: the whole batch commits, or none of it (no torn batch to cut). The
// fence is read FOR SHARE in the same statement: a takeover's epoch UPDATE waits for this append, and an
// append after it finds another epoch and inserts no row (the count says so).
const APPEND_SQL = `WITH fence AS (SELECT epoch FROM ${TABLE.leader} WHERE id = 1 AND epoch = $6 FOR SHARE),
ins AS (${insertRows({ where: 'EXISTS (SELECT 1 FROM fence)' })} RETURNING seq)
SELECT count(*)::int AS n, CASE WHEN count(*) > 0 THEN pg_notify('${APPEND_CHANNEL}', max(seq)::text) END AS notified FROM ins`;

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
  private epochValue: number | null = null;
  private beat: NodeJS.Timeout | null = null;
  private follower: PgFollower | null = null;
  private standing = false;
  private readonly reader: LazyPgConnection;
  private reportedAt = -Infinity;
  readonly location: string;
  readonly kind = 'postgres';

  constructor(private readonly options: PgEventStoreOptions) {
    super(options);
    this.location = redactPgUrl(options.url);
    this.reader = new LazyPgConnection(options.url, 'reader');
  }

  protected get writable(): boolean {
    return this.client !== null;
  }

  async open(opts: OpenOptions): Promise<OpenResult> {
    if (this.options.standby) return this.openStandby(opts);
    const client = await connectPg(this.options.url, 'writer');
    // The session holds the lock: once it is gone another relay may write, so this one must stop.
    client.on('error', (err) => this.lost(err));
    try {
      // Before anything is read or written (a migration is a write): one writer per log.
      await takeWriterLock(client, this.location);
      await migrate(client);
      this.epochValue = await claimEpoch(client, holderName());
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

  /** Leader or standby, the epoch this relay leads in, and (a standby) how far behind the leader it reads. */
  role(): PgRole {
    if (this.standing) return { role: 'standby', epoch: this.follower?.leaderEpoch ?? null, lag: this.follower?.lag() ?? null };
    return { role: 'leader', epoch: this.epochValue, lag: null };
  }

  private get leaseMs(): number {
    return this.options.leaseMs ?? 3000;
  }

  private get pollMs(): number {
    return this.options.pollMs ?? 500;
  }

  /** The log as it is now, read without the lock (a standby's start). */
  private async openStandby(opts: OpenOptions): Promise<OpenResult> {
    const client = await connectPg(this.options.url, 'standby');
    client.on('error', () => undefined);
    try {
      const walk = await walkPgLog(client, opts);
      this.seq = walk.lastSeq;
      this.hash = walk.lastHash;
      this.cut = walk.cut;
    } finally {
      await client.end().catch(() => undefined);
    }
    this.standing = true;
    return { lastSeq: this.seq, lastHash: this.hash, ...(this.cut ? { cut: this.cut } : {}) };
  }

  /** A standby follows the leader's appends from where its read models are; `onError`: the log cannot be followed. */
  async follow(onError: (err: Error) => void): Promise<void> {
    const onFollowed = this.options.onFollowed;
    if (!this.standing || !onFollowed) throw new Error('only a standby follows the log');
    this.follower = new PgFollower({
      url: this.options.url,
      pollMs: this.pollMs,
      from: { seq: this.seq, hash: this.hash },
      onBatch: onFollowed,
      onError,
      afterRead: (client) => this.reportSelf(client, false),
    });
    await this.follower.start();
  }

  /**
   * Waits for the writer's lock (the leader's session ended), then leads: raises the epoch first (the
   * fence), reads the rest of the log under the lock, and opens for appends. Resolves with the new epoch,
   * or null when `stopped()` said to give up.
   */
  async takeOver(stopped: () => boolean): Promise<{ epoch: number; previous: number } | null> {
    let client: PgClient | null = null;
    try {
      while (!stopped()) {
        client ??= await connectPg(this.options.url, 'writer').catch(() => null);
        if (client && (await tryWriterLock(client).catch(() => false))) break;
        await new Promise((r) => setTimeout(r, this.pollMs));
      }
      if (!client || stopped()) return null;
      client.on('error', (err) => this.lost(err));
      await migrate(client);
      const epoch = await claimEpoch(client, holderName());
      const follower = this.follower;
      await follower?.stop();
      if (follower) {
        await follower.catchUp(client);
        this.seq = follower.lastSeq;
        this.hash = follower.lastHash;
      }
      this.follower = null;
      const previous = this.epochValue ?? epoch - 1;
      this.epochValue = epoch;
      this.failed = null;
      this.standing = false;
      this.client = client;
      await this.armLease();
      client = null;
      return { epoch, previous };
    } finally {
      await client?.end().catch(() => undefined);
    }
  }

  /**
   * A leader that lost the log (fenced, its session ended) becomes a standby again from its durable state
   * (what it appended and was not acknowledged was never applied to the read models).
   */
  async stepDown(durable: { seq: number; hash: string }): Promise<void> {
    this.stopBeat();
    const client = this.client;
    this.client = null;
    this.closing = false;
    await client?.end().catch(() => undefined);
    this.seq = durable.seq;
    this.hash = durable.hash;
    this.failed = null;
    this.standing = true;
  }

  /**
   * Bounds how long this leader keeps the lock once it stops answering (pg-leader.ts `startLease`), with a
   * heartbeat on the writer's session. Armed once the relay is up (the relay calls it after it listens; a
   * takeover at once): start-up holds the event loop for seconds on a busy host, past any useful lease.
   */
  async armLease(): Promise<void> {
    const client = this.client;
    if (!client || this.beat) return;
    await startLease(client, this.leaseMs);
    const epoch = this.epochValue!;
    // The heartbeat keeps the session from going idle past the lease, and finds out when another leads.
    this.beat = setInterval(
      () => {
        if (this.client !== client) return;
        void heartbeat(client, epoch).then(
          () => this.reportSelf(client, true),
          (err: Error) => this.lost(err),
        );
      },
      Math.max(200, Math.floor(this.leaseMs / 3)),
    );
    this.beat.unref();
  }

  /** This relay's member row (pg-members.ts); a failure (an older schema, a blip) waits for the next beat or read. */
  private async reportSelf(client: PgClient, leader: boolean): Promise<void> {
    const m = this.options.member;
    // A standby reads every poll; its row needs no more than the leader's beat (a third of the lease).
    if (!m || (!leader && m.now() - this.reportedAt < this.leaseMs / 3)) return;
    this.reportedAt = m.now();
    const r = this.role();
    const seq = leader ? this.seq : (this.follower?.lastSeq ?? this.seq);
    const lag = r.lag ?? { records: 0, ms: 0 };
    await reportSelf(client, m, { role: leader ? 'leader' : 'standby', epoch: r.epoch, seq, lag }).catch(() => undefined);
  }

  /** Every relay on this database as its rows say (a read on its own connection). */
  async members(): Promise<{ members: PgMember[]; history: PgLeaderChange[] }> {
    const c = await this.reader.get();
    return { members: await listMembers(c), history: await leaderHistory(c) };
  }

  private stopBeat(): void {
    if (this.beat) clearInterval(this.beat);
    this.beat = null;
  }

  async close(): Promise<void> {
    await this.drain().catch(() => undefined);
    this.closing = true;
    this.stopBeat();
    await this.follower?.stop();
    this.follower = null;
    await this.reader.close();
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
      values: [columns.seqs, columns.ats, columns.types, columns.actors, JSON.stringify(batch.lines), this.epochValue],
    };
    const cutSeq = cutOfBatch(batch.events);
    let inserted: number;
    try {
      inserted = cutSeq === null ? await this.insert(append) : await this.appendWithCut(append, cutSeq);
    } catch (err) {
      // The writer's session is the lock: a write that failed leaves this relay unsure it still leads.
      throw new PgLeadershipLostError(`event log write failed: ${pgReason(err)}`);
    }
    if (inserted !== batch.events.length) throw new PgFencedError(this.epochValue ?? 0, null);
  }

  private async insert(append: { name: string; text: string; values: unknown[] }): Promise<number> {
    const r = await this.client!.query<{ n: number }>(append);
    return r.rows[0]?.n ?? 0;
  }

  /**
   * A batch holding a `log.pruned` record: the record is appended and the rows up to its cut deleted in one
   * transaction, so the log never holds the record without the cut nor lacks rows without the record.
   */
  private async appendWithCut(append: { name: string; text: string; values: unknown[] }, cutSeq: number): Promise<number> {
    const c = this.client!;
    await c.query('BEGIN');
    try {
      const n = await this.insert(append);
      // Fenced: nothing is deleted either.
      if (n === 0) {
        await c.query('ROLLBACK');
        return 0;
      }
      await c.query(DELETE_CUT_SQL, [cutSeq]);
      await c.query('COMMIT');
      return n;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  private lost(err: Error): void {
    if (this.closing || this.failed || this.standing) return;
    this.stopBeat();
    const why = err instanceof PgFencedError ? err : new PgLeadershipLostError(`event store connection lost (${this.location}): ${pgReason(err)}`);
    this.fail(why, null);
  }
}

/** The writer's session ended (the lease ran out, the server or the network went away): another relay may lead now. */
export class PgLeadershipLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PgLeadershipLostError';
  }
}

/** Whether a store failure means this relay stopped leading (a standby may have taken over): step down, do not retry. */
export function isLeadershipLoss(err: unknown): boolean {
  return err instanceof PgFencedError || err instanceof PgLeadershipLostError;
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
