import { DomainError, ReadModels, upcastSnapshotState } from '@svc/domain';
import {
  EventBus,
  eventSchemas,
  type EventStore,
  type SnapshotPort,
  SnapshotCipher,
  type NewEvent,
  type RelayEvent,
  type Snapshot,
  type StoredEvent,
  type StoredRelayEvent,
  type RecordedCut,
  PgEventStore,
  isLeadershipLoss,
  type PgRole,
} from '@svc/events';
import type { Logger } from 'pino';
import type { PersonalSealer } from '../../personal/personal-sealer';
import type { Clock } from './clock';
import type { Secrets } from '../auth/secrets';

/** A rule run by the loop; `E` is the events it can decide, and what `run` hands back, already narrowed. */
export type Decide<E extends RelayEvent = RelayEvent> = (models: ReadModels, now: Date) => readonly NewEvent<E>[];

/**
 * Makes the store the loop writes through and the one its snapshots go to (the composition root picks
 * the adapter: `fileStore`, or `postgresStore` for RELAY_EVENT_STORE=postgres://...).
 */
export type StoreFactory = (hooks: {
  onDurable: (batch: readonly StoredEvent[]) => void;
  /** A standby's records, read from the leader's log (sealed as stored). */
  onFollowed: (batch: readonly StoredEvent[]) => Promise<void>;
  onFatal: (err: Error) => void;
  /** The install's MAC for snapshots. */
  mac: (text: string) => string;
  /** Encrypts snapshots at rest (they hold personal content). */
  snapshotCipher: SnapshotCipher;
}) => { store: EventStore; snapshots: SnapshotPort };

export type CommandLoopOptions = {
  store: StoreFactory;
  secrets: Secrets;
  clock: Clock;
  logger: Logger;
  snapshotEvery: number;
  /** Seals personal content into the records and opens it on replay (none: records are written as decided). */
  sealer?: PersonalSealer;
  /** The store cannot write: state ran ahead of the disk, so the process must stop. */
  onFatal: (err: Error) => void;
};

/** How long a client is told to wait before it tries a standby again (a takeover takes seconds). */
export const STANDBY_RETRY_AFTER_S = 5;

/** What a standby answers to anything that would write: 503 `relay.standby`, with a Retry-After. */
export function standbyError(): DomainError {
  return new DomainError('relay.standby', 'unavailable', 'this relay is a hot standby: it takes over when the leader stops; try again', {
    retry_after: STANDBY_RETRY_AFTER_S,
  });
}

/** A pruned log whose cut no usable snapshot covers: the records before the cut are gone, so it cannot be replayed. */
export class PrunedWithoutSnapshotError extends Error {
  constructor(
    readonly cut: RecordedCut,
    snapshotSeq: number | null,
  ) {
    super(
      `the event log starts at a cut (records up to seq ${cut.cutSeq} were pruned at seq ${cut.recordedAt}), and ` +
        (snapshotSeq === null ? 'no usable snapshot is left' : `the latest usable snapshot is of seq ${snapshotSeq}, before the cut`) +
        `: the relay cannot rebuild its state without the pruned records. Restore the snapshots directory from a backup, or copy the archived segments back into the events directory`,
    );
    this.name = 'PrunedWithoutSnapshotError';
  }
}

/**
 * The command loop of ARCHITECTURE.md. Decisions run one at a time against `decision` (which already
 * holds events of the group commit in flight); `models` and the bus advance only once a batch is
 * durable, in seq order.
 */
export class CommandLoop {
  /** Durable read models: what routes, gateways and the console read. */
  readonly models = new ReadModels();
  readonly bus = new EventBus();
  private readonly decision = new ReadModels();
  private lastSnapshotSeq = 0;
  private snapshotting: Promise<void> | null = null;
  private lastHashValue = '';
  private readonly recent: number[] = [];
  recovered: { segment: string; droppedBytes: number } | undefined;
  /** The recorded cut the log starts at (it was pruned), or null: it starts at seq 1. */
  cut: RecordedCut | null = null;
  /** The lock of a writer that did not stop, taken over at open (recorded in `relay.started`). */
  staleLock: { pid: number | null; since: string | null } | undefined;

  private constructor(
    private readonly store: EventStore,
    private readonly snapshots: SnapshotPort,
    private readonly opts: CommandLoopOptions,
  ) {}

  static async open(opts: CommandLoopOptions): Promise<CommandLoop> {
    // eslint-disable-next-line prefer-const -- assigned once below; the store's callback needs the binding first
    let loop!: CommandLoop;
    const { store, snapshots } = opts.store({
      onDurable: (batch) => loop.onDurable(batch),
      onFollowed: (batch) => loop.onFollowed(batch),
      onFatal: opts.onFatal,
      mac: (t) => opts.secrets.mac('snapshot', t),
      snapshotCipher: new SnapshotCipher(opts.secrets.derivedKey('snapshot-encryption')),
    });
    loop = new CommandLoop(store, snapshots, opts);
    let snap = await snapshots.latest<Record<string, unknown>>();
    if (snap) {
      // A snapshot of an older read-model schema is upcast (a pruned log cannot be replayed from seq 1).
      const up = upcastSnapshotState(snap.models);
      const unusable = 'reason' in up ? up.reason : loop.models.unrestorable(up.state);
      if (unusable || 'reason' in up) {
        opts.logger.warn(
          { snapshotSeq: snap.seq, reason: unusable },
          'snapshot not used (written by another relay version); replaying the whole log',
        );
        snap = null;
      } else {
        if (up.upcastFrom !== undefined)
          opts.logger.info({ snapshotSeq: snap.seq, from: up.upcastFrom }, 'snapshot upcast to this read-model schema');
        snap = { ...snap, models: up.state };
      }
    }
    if (snap) loop.models.restore(snap.models);
    const started = opts.clock.now().getTime();
    let reported = started;
    const opened = await store.open({
      fromSeq: snap ? snap.seq + 1 : 1,
      expectPrev: snap?.hash,
      // Older records read as the current shape of their type; one this relay does not know stops the start.
      onEvent: opts.sealer ? (e) => loop.models.apply(eventSchemas.upcast(opts.sealer!.unseal(e))) : (e) => loop.models.apply(eventSchemas.upcast(e)),
      // A long replay (a big log without a usable snapshot) says where it is every 2 s.
      onProgress: (p) => {
        const now = opts.clock.now().getTime();
        if (now - reported < 2000) return;
        reported = now;
        const percent = p.total > 0 ? Math.floor((p.done * 100) / p.total) : 0;
        opts.logger.info({ percent, seq: p.seq, seconds: Math.round((now - started) / 1000) }, 'replaying the event log');
      },
    });
    if (opened.cut && !(snap && snap.seq >= opened.cut.cutSeq)) {
      await store.close();
      throw new PrunedWithoutSnapshotError(opened.cut, snap?.seq ?? null);
    }
    loop.cut = opened.cut ?? null;
    loop.decision.restore(structuredClone(loop.models.snapshot()));
    loop.lastSnapshotSeq = snap?.seq ?? 0;
    loop.lastHashValue = opened.lastHash;
    loop.recovered = opened.recovered;
    loop.staleLock = opened.staleLock;
    if (opened.staleLock) {
      opts.logger.warn(opened.staleLock, 'event log: the previous relay did not stop (its lock was left behind); took it over');
    }
    if (opened.recovered) {
      opts.logger.warn(opened.recovered, 'event log: cut a torn last line (an interrupted write) before starting');
    }
    opts.logger.info({ lastSeq: opened.lastSeq, fromSnapshot: snap?.seq ?? null }, 'event log opened');
    return loop;
  }

  /** Told how long each decision's events took to become durable (the metrics' commit histogram). */
  commitObserver: ((seconds: number) => void) | null = null;

  /** May refuse a decision's events before they are appended (the disk guard, the device event budget): a throw writes nothing. */
  admission: ((events: readonly NewEvent[], actor: string) => void) | null = null;

  /** Decide against the latest state, append, and resolve once durable. A DomainError writes nothing. */
  run<E extends RelayEvent = RelayEvent>(actor: string, decide: Decide<E>): Promise<StoredEvent<E>[]> {
    if (this.standby) return Promise.reject(standbyError());
    const now = this.opts.clock.now();
    let events: readonly NewEvent<E>[];
    try {
      events = decide(this.decision, now);
      if (events.length > 0) this.admission?.(events, actor);
    } catch (err) {
      return Promise.reject(err);
    }
    if (events.length === 0) return Promise.resolve([]);
    let appended;
    let durable;
    try {
      const sealed = this.opts.sealer?.seal(events, this.decision, now) ?? null;
      appended = this.store.append(sealed ? sealed.records : events, now.toISOString(), actor);
      durable = appended.durable;
      if (sealed) {
        // The record (already encoded and hashed) keeps the sealed form; everything in the process sees the open one.
        appended.stored.forEach((s, i) => {
          const opened = sealed.opened[i];
          if (opened) (s as { data: object }).data = opened;
        });
        if (sealed.persisted) durable = Promise.all([durable, sealed.persisted]).then(() => undefined);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    const stored = appended.stored;
    // Lost the log under this decision (another relay took over): its caller hears 503 relay.standby, not a 500.
    durable = durable.catch((err: unknown) => {
      throw isLeadershipLoss(err) ? standbyError() : err;
    });
    for (const e of stored) this.decision.apply(e);
    const observe = this.commitObserver;
    if (!observe) return durable.then(() => stored as StoredEvent<E>[]);
    const t0 = process.hrtime.bigint();
    return durable.then(() => {
      observe(Number(process.hrtime.bigint() - t0) / 1e9);
      return stored as StoredEvent<E>[];
    });
  }

  /**
   * Records a fact observed at the edge (a socket opened or closed, the relay started): nothing is
   * decided, the events are written as given, through the same admission, order and durability as `run`.
   */
  record<E extends RelayEvent = RelayEvent>(actor: string, events: readonly NewEvent<E>[]): Promise<StoredEvent<E>[]> {
    return this.run(actor, () => events);
  }

  /** What seals personal content (and holds its data keys), when the relay has one. */
  get sealer(): PersonalSealer | undefined {
    return this.opts.sealer;
  }

  get lastSeq(): number {
    return this.models.lastSeq;
  }

  get lastHash(): string {
    return this.lastHashValue;
  }

  /** Durable events per second over the last 10 s. */
  eventsPerSecond(): number {
    const cutoff = Date.now() - 10_000;
    while (this.recent.length && this.recent[0] < cutoff) this.recent.shift();
    return this.recent.length / 10;
  }

  drain(): Promise<void> {
    return this.store.drain();
  }

  /** Which store holds the log. */
  get storeKind(): 'file' | 'postgres' {
    return this.store.kind;
  }

  /** Where the log is, fit to print (a database URL without its password). */
  get location(): string {
    return this.store.location;
  }

  /** Leader or standby (a PostgreSQL store; the file log always leads), its epoch and a standby's lag. */
  role(): PgRole {
    return this.store instanceof PgEventStore ? this.store.role() : { role: 'leader', epoch: null, lag: null };
  }

  get standby(): boolean {
    return this.store instanceof PgEventStore && this.store.role().role === 'standby';
  }

  /** A standby follows the leader's log into its read models (and the bus: the console sees it live). */
  follow(onError: (err: Error) => void): Promise<void> {
    return this.pg().follow(onError);
  }

  /** Waits for the writer's lock and leads; the decisions start from the durable models. Null: `stopped` said to give up. */
  async takeOver(stopped: () => boolean): Promise<{ epoch: number; previous: number } | null> {
    const led = await this.pg().takeOver(stopped);
    if (led) this.decision.restore(structuredClone(this.models.snapshot()));
    return led;
  }

  /**
   * After a takeover is recorded: following read only the keys records named, and a leader counts and
   * forgets by every key the table holds. (Not inside takeOver: its wait on the database would let the
   * scheduler's first tick record before the new leader's relay.started.)
   */
  async readAllKeys(): Promise<void> {
    await this.opts.sealer?.keys.sync?.();
  }

  /** The relays on this database and the newest takeovers (svc_relay_members; null: the file log has no standby). */
  relays(): ReturnType<PgEventStore['members']> | null {
    return this.store instanceof PgEventStore ? this.store.members() : null;
  }

  /** Starts the leader's lease on its database session (PostgreSQL; nothing for the file log). */
  armLease(): Promise<void> {
    return this.store instanceof PgEventStore ? this.store.armLease() : Promise.resolve();
  }

  /** A leader that lost the log goes back to standby from its durable models (unacknowledged decisions are dropped). */
  async stepDown(): Promise<void> {
    await this.pg().stepDown({ seq: this.models.lastSeq, hash: this.lastHashValue });
    this.decision.restore(structuredClone(this.models.snapshot()));
  }

  private pg(): PgEventStore {
    if (!(this.store instanceof PgEventStore)) throw new Error('only a PostgreSQL event store has a standby');
    return this.store;
  }

  async close(): Promise<void> {
    // The last snapshot goes in before the store closes (a database store writes it on its connection).
    await this.store.drain().catch(() => undefined);
    await this.snapshotting;
    // A standby writes no snapshot: the leader's are the ones start-up reads.
    if (!this.standby && this.models.lastSeq > this.lastSnapshotSeq) await this.writeSnapshot();
    await this.store.close();
    await this.snapshots.close?.();
    this.bus.complete();
  }

  private onDurable(batch: readonly StoredEvent[]): void {
    const t = Date.now();
    for (const e of batch) {
      this.models.apply(e);
      this.lastHashValue = e.hash;
      if (this.recent.length < 100_000) this.recent.push(t);
      this.bus.publish(e as StoredRelayEvent);
    }
    if (this.models.lastSeq - this.lastSnapshotSeq >= this.opts.snapshotEvery && !this.snapshotting && !this.standby) {
      this.snapshotting = this.writeSnapshot().finally(() => (this.snapshotting = null));
    }
  }

  /**
   * A standby's records: opened with the data keys as they are in the database now, then applied as a
   * durable batch. The leader stores a new key beside its append, not inside it, so a record may arrive
   * before its key: it is read again on a later tick (a few times) before its content counts as forgotten.
   */
  private async onFollowed(batch: readonly StoredEvent[]): Promise<void> {
    const sealer = this.opts.sealer;
    await sealer?.keys.sync?.(sealer.keyIds(batch));
    const opened = batch.map((e) => eventSchemas.upcast(sealer ? sealer.unseal(e) : e));
    const waiting = sealer
      ? opened.find((e) => (e.data as { forgotten?: unknown; sealedWith?: unknown }).sealedWith && (e.data as { forgotten?: unknown }).forgotten)
      : undefined;
    if (waiting && this.keyWaits++ < 5) throw new Error(`data key of seq ${waiting.seq} not visible yet`);
    this.keyWaits = 0;
    this.onDurable(opened);
  }

  private keyWaits = 0;

  /**
   * After a forgetting: every snapshot written before it goes, and one of the models as they are now (the
   * forgotten content already emptied) takes their place.
   */
  async renewSnapshots(): Promise<void> {
    await this.snapshotting;
    await this.snapshots.clear();
    await this.writeSnapshot();
  }

  /** The seq of the latest snapshot written or restored (0: none): no record after it may be pruned. */
  get snapshotSeq(): number {
    return this.lastSnapshotSeq;
  }

  /** Writes a snapshot of the durable models now (before a prune, so it can cut up to the head). */
  async snapshotNow(): Promise<void> {
    await this.store.drain();
    await this.snapshotting;
    if (this.models.lastSeq > this.lastSnapshotSeq) await this.writeSnapshot();
  }

  /** Never rejects: a snapshot that is not written only makes the next start replay more. */
  private async writeSnapshot(): Promise<void> {
    const snap: Snapshot = {
      seq: this.models.lastSeq,
      hash: this.lastHashValue,
      at: this.opts.clock.now().toISOString(),
      models: this.models.snapshot(),
    };
    try {
      await this.snapshots.write(snap);
      this.lastSnapshotSeq = snap.seq;
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).message }, 'snapshot not written; start-up will replay more of the log');
    }
  }
}
