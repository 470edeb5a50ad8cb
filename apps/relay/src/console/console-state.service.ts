import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { ChainStatus, LogSize } from '@svc/console-api';
import { listSegments, PgLogSource, TABLE, type EventLogFilter } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/loop/clock';
import { relayDir } from '../common/config/config';
import { type RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { ChainMonitor } from './chain-monitor';
import { EventHistory, type Page } from './event-history';
import { PgChainMonitor, PgEventHistory } from './pg-console-log';

/**
 * What the console reads beyond the read models: event history, chain status, log size, from the file
 * log's segments or the database's table (RELAY_EVENT_STORE), on a reader connection of its own.
 */
@Injectable()
export class ConsoleState implements OnModuleInit, OnModuleDestroy {
  private readonly history: EventHistory | PgEventHistory;
  private readonly chain: ChainMonitor | PgChainMonitor;
  private readonly pg: PgLogSource | null;
  private readonly eventsDir: string;
  private sub: Subscription | null = null;
  private sized: { seq: number; size: LogSize } | null = null;
  private checked: { seq: number; status: ChainStatus } | null = null;

  constructor(
    private readonly loop: CommandLoop,
    clock: Clock,
    @Inject(RELAY_CONFIG) config: RelayConfig,
  ) {
    this.eventsDir = path.join(relayDir(config), 'events');
    const durable = () => this.loop.lastSeq;
    this.pg = config.eventStoreUrl ? new PgLogSource(config.eventStoreUrl) : null;
    this.history = this.pg ? new PgEventHistory(this.pg, durable) : new EventHistory(this.eventsDir, durable);
    this.chain = this.pg
      ? new PgChainMonitor(this.pg, durable, () => clock.now().getTime())
      : new ChainMonitor(this.eventsDir, () => clock.now().getTime());
  }

  async onModuleInit(): Promise<void> {
    await this.history.seed();
    this.sub = this.loop.bus.events$.subscribe((e) => this.history.push(e));
  }

  async onModuleDestroy(): Promise<void> {
    this.sub?.unsubscribe();
    await this.pg?.close();
  }

  newest(n: number) {
    return this.history.newest(n);
  }

  /** Events with seq > after, oldest first. */
  after(after: number, limit: number, filter?: EventLogFilter): Promise<Page> {
    return Promise.resolve(this.history.after(after, limit, filter));
  }

  /** Events with seq < before, newest first. */
  before(before: number | undefined, limit: number, filter?: EventLogFilter): Promise<Page> {
    return Promise.resolve(this.history.before(before, limit, filter));
  }

  /** The chain status; reads the log only when it has grown since the last look. */
  async chainStatus(): Promise<ChainStatus> {
    const seq = this.loop.lastSeq;
    if (this.checked?.seq !== seq) this.checked = { seq, status: await this.chain.check() };
    return this.checked.status;
  }

  /** Where the log is, for the full check from seq 1 (store/chain-verify-jobs.ts), which reads it itself. */
  logSource(): { kind: 'file'; dir: string } | { kind: 'postgres'; source: PgLogSource } {
    return this.pg ? { kind: 'postgres', source: this.pg } : { kind: 'file', dir: this.eventsDir };
  }

  /** A full check's verdict: a break it found stays (as the monitor's own would); a clean one clears an old break. */
  adoptFullCheck(status: ChainStatus): void {
    if (status.state === 'broken') {
      this.chain.adopt(status);
      this.checked = { seq: this.loop.lastSeq, status };
    } else if (this.checked?.status.state === 'broken') {
      this.chain.reset();
      this.checked = null;
    }
  }

  async logSize(): Promise<LogSize> {
    const seq = this.loop.lastSeq;
    if (this.sized?.seq !== seq) this.sized = { seq, size: await this.measure() };
    return this.sized.size;
  }

  private async measure(): Promise<LogSize> {
    if (this.pg) {
      const c = await this.pg.connection();
      const r = await c.query<{ bytes: string }>(`SELECT pg_total_relation_size($1) AS bytes`, [TABLE.events]);
      return { store: 'postgres', bytes: Number(r.rows[0].bytes), segments: 1 };
    }
    let bytes = 0;
    const segments = listSegments(this.eventsDir);
    for (const s of segments) {
      try {
        bytes += fs.statSync(path.join(this.eventsDir, s.file)).size;
      } catch {
        // a segment removed (by hand) between list and stat: counted as gone; the chain monitor reports it
      }
    }
    return { store: 'file', bytes, segments: segments.length };
  }
}
