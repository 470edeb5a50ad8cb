import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { listSegments } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/clock';
import { relayDir, type RelayConfig } from '../common/config';
import { CommandLoop } from '../common/command-loop';
import { RELAY_CONFIG } from '../common/tokens';
import { ChainMonitor, type ChainStatus } from './chain-monitor';
import { EventHistory } from './event-history';

/** What the console reads beyond the read models: event history, chain status, log size. */
@Injectable()
export class ConsoleState implements OnModuleInit, OnModuleDestroy {
  readonly eventsDir: string;
  readonly history: EventHistory;
  readonly chain: ChainMonitor;
  private sub: Subscription | null = null;
  private sized: { seq: number; size: { bytes: number; segments: number } } | null = null;
  private checked: { seq: number; status: ChainStatus } | null = null;

  constructor(
    private readonly log: CommandLoop,
    clock: Clock,
    @Inject(RELAY_CONFIG) config: RelayConfig,
  ) {
    this.eventsDir = path.join(relayDir(config), 'events');
    this.history = new EventHistory(this.eventsDir, () => this.log.lastSeq);
    this.chain = new ChainMonitor(this.eventsDir, () => clock.now().getTime());
  }

  onModuleInit(): void {
    this.history.seed();
    this.sub = this.log.bus.events$.subscribe((e) => this.history.push(e));
  }

  onModuleDestroy(): void {
    this.sub?.unsubscribe();
  }

  /** The chain status; touches the disk only when the log has grown since the last look. */
  chainStatus(): ChainStatus {
    const seq = this.log.lastSeq;
    if (this.checked?.seq !== seq) this.checked = { seq, status: this.chain.check() };
    return this.checked.status;
  }

  /** A full re-read from seq 1. */
  verifyChain(): ChainStatus {
    this.chain.reset();
    this.checked = { seq: this.log.lastSeq, status: this.chain.check(true) };
    return this.checked.status;
  }

  logSize(): { bytes: number; segments: number } {
    const seq = this.log.lastSeq;
    if (this.sized?.seq !== seq) this.sized = { seq, size: this.measure() };
    return this.sized.size;
  }

  private measure(): { bytes: number; segments: number } {
    let bytes = 0;
    const segments = listSegments(this.eventsDir);
    for (const s of segments) {
      try {
        bytes += fs.statSync(path.join(this.eventsDir, s.file)).size;
      } catch {
        // a segment removed (by hand) between list and stat: counted as gone; the chain monitor reports it
      }
    }
    return { bytes, segments: segments.length };
  }
}
