import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Subscription } from 'rxjs';
import { CommandLoop } from '../common/command-loop';
import { PhoneHub } from '../phone-socket/phone-hub.service';

/**
 * Prometheus metrics (issue 16): requests by route template and status, phone sockets, durable events and
 * commit latency, Device Control outcomes and safety decisions, media bytes served, terminal shells, the
 * Threads queue, desktop calls, and the process's own metrics (prom-client). No label ever holds a token,
 * a code, a device name or a path: routes are their templates (`/media/:token`), everything else a fixed
 * set of values from the relay's own vocabulary.
 */
@Injectable()
export class MetricsService implements OnModuleInit, OnModuleDestroy {
  readonly registry = new Registry();
  private readonly subs: Subscription[] = [];
  readonly httpRequests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  readonly eventsAppended = new Counter({
    name: 'svc_events_appended_total',
    help: 'Durable events appended to the log, by type',
    labelNames: ['type'],
    registers: [this.registry],
  });
  readonly commitSeconds = new Histogram({
    name: 'svc_event_commit_seconds',
    help: 'Time from append to durable (the group commit and its fdatasync), per decision',
    buckets: [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  readonly bridgeCommands = new Counter({
    name: 'svc_bridge_commands_total',
    help: 'Device Control commands by outcome',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  readonly safetyDecisions = new Counter({
    name: 'svc_bridge_safety_decisions_total',
    help: 'Safety pipeline decisions',
    labelNames: ['decision'],
    registers: [this.registry],
  });
  readonly mediaBytes = new Counter({
    name: 'svc_media_bytes_served_total',
    help: 'Media bytes served, by token or by path',
    labelNames: ['via'],
    registers: [this.registry],
  });
  readonly desktopCalls = new Counter({
    name: 'svc_desktop_calls_total',
    help: 'Desktop tool calls by outcome',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  constructor(
    private readonly log: CommandLoop,
    private readonly hub: PhoneHub,
  ) {
    const models = () => this.log.models;
    const phones = this.hub;
    new Gauge({
      name: 'svc_phone_sockets',
      help: 'Phone sockets open, and authenticated',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        this.set({ state: 'open' }, phones.openCount());
        this.set({ state: 'authenticated' }, phones.authenticatedCount());
      },
    });
    new Gauge({
      name: 'svc_terminal_shells',
      help: 'Terminal shells running',
      registers: [this.registry],
      collect() {
        this.set(models().terminal.allShells().length);
      },
    });
    new Gauge({
      name: 'svc_threads_queue_depth',
      help: 'Agent-to-phone messages queued for a phone',
      registers: [this.registry],
      collect() {
        this.set(models().phoneThreads.queuedCount());
      },
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
  }

  onModuleInit(): void {
    this.log.commitObserver = (seconds) => this.commitSeconds.observe(seconds);
    this.subs.push(
      this.log.bus.events$.subscribe((e) => {
        this.eventsAppended.inc({ type: e.type });
        switch (e.type) {
          case 'bridge.command_answered':
            this.bridgeCommands.inc({ outcome: e.data.status < 400 ? 'answered' : 'error_status' });
            break;
          case 'bridge.command_failed':
            this.bridgeCommands.inc({ outcome: e.data.reason });
            break;
          case 'bridge.safety_decided':
            this.safetyDecisions.inc({ decision: e.data.decision });
            break;
          case 'media.fetched':
            this.mediaBytes.inc({ via: e.data.via }, e.data.end >= e.data.start ? e.data.end - e.data.start + 1 : 0);
            break;
          case 'desktop.command_completed':
            this.desktopCalls.inc({ outcome: e.data.outcome });
            break;
          default:
            break;
        }
      }),
    );
  }

  onModuleDestroy(): void {
    this.log.commitObserver = null;
    for (const s of this.subs) s.unsubscribe();
  }

  /** One answered request (the Fastify onResponse hook): the route template, never the path. */
  observeHttp(method: string, route: string | undefined, status: number): void {
    this.httpRequests.inc({ method, route: route ?? 'unmatched', status: String(status) });
  }
}
