import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type * as Prom from 'prom-client';
import type { Subscription } from 'rxjs';
import { CommandLoop } from '../common/loop/command-loop';
import { PhoneHub } from '../phone-socket/phone-hub.service';
import type { MetricsReading } from './metrics-sampler';

const COMMIT_BUCKETS = [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

type Labels = Record<string, string>;

/** A labelled counter kept as plain numbers until a scrape renders it. */
class Tally {
  readonly values = new Map<string, { labels: Labels; n: number }>();
  inc(labels: Labels, by = 1): void {
    this.incKeyed(Object.values(labels).join('\u0000'), () => labels, by);
  }
  /** `inc` with the key made by the caller, and the labels made only the first time (the per-request path). */
  incKeyed(key: string, labels: () => Labels, by = 1): void {
    const v = this.values.get(key);
    if (v) v.n += by;
    else this.values.set(key, { labels: labels(), n: by });
  }
}

/**
 * Prometheus metrics (issue 16): requests by route template and status, phone sockets, durable events and
 * commit latency, Device Control outcomes and safety decisions, media bytes served, terminal shells, the
 * Threads queue, desktop calls, and the process's own metrics. Counting is plain numbers; prom-client is
 * loaded by the first scrape (it costs start-up tens of milliseconds otherwise). No label ever holds a
 * token, a code, a device name or a path: routes are their templates (`/media/:token`), everything else
 * a fixed set of values from the relay's own vocabulary.
 */
@Injectable()
export class MetricsService implements OnModuleInit, OnModuleDestroy {
  private readonly subs: Subscription[] = [];
  private readonly http = new Tally();
  private readonly events = new Tally();
  private readonly bridge = new Tally();
  private readonly safety = new Tally();
  private readonly media = new Tally();
  private readonly desktop = new Tally();
  private readonly witness = new Tally();
  private readonly commit = { buckets: COMMIT_BUCKETS.map(() => 0), sum: 0, count: 0 };
  private registry: Prom.Registry | null = null;

  constructor(
    private readonly loop: CommandLoop,
    private readonly hub: PhoneHub,
  ) {}

  onModuleInit(): void {
    this.loop.commitObserver = (seconds) => {
      this.commit.count++;
      this.commit.sum += seconds;
      for (let i = 0; i < COMMIT_BUCKETS.length; i++) if (seconds <= COMMIT_BUCKETS[i]) this.commit.buckets[i]++;
    };
    this.subs.push(
      this.loop.bus.events$.subscribe((e) => {
        this.events.inc({ type: e.type });
        switch (e.type) {
          case 'bridge.command_answered':
            this.bridge.inc({ outcome: e.data.status < 400 ? 'answered' : 'error_status' });
            break;
          case 'bridge.command_failed':
            this.bridge.inc({ outcome: e.data.reason });
            break;
          case 'bridge.safety_decided':
            this.safety.inc({ decision: e.data.decision });
            break;
          case 'media.fetched':
            this.media.inc({ via: e.data.via }, e.data.end >= e.data.start ? e.data.end - e.data.start + 1 : 0);
            break;
          case 'desktop.command_completed':
            this.desktop.inc({ outcome: e.data.outcome });
            break;
          default:
            break;
        }
      }),
    );
  }

  onModuleDestroy(): void {
    this.loop.commitObserver = null;
    for (const s of this.subs) s.unsubscribe();
  }

  /** One answered request (the Fastify onResponse hook): the route template, never the path. */
  observeHttp(method: string, route: string | undefined, status: number): void {
    this.http.incKeyed(`${method}\u0000${route ?? 'unmatched'}\u0000${status}`, () => ({
      method,
      route: route ?? 'unmatched',
      status: String(status),
    }));
  }

  /**
   * What a transparency-log witness answered (issue 39): `way` push (the relay submitted, RELAY_WITNESS_URLS)
   * or pull (the witness posted to /log/cosignature or /log/witness-refusal); `witness` is a configured key
   * name (RELAY_WITNESS_VKEYS), so the label set is the operator's, bounded.
   */
  observeWitness(witness: string, way: 'push' | 'pull', outcome: 'cosigned' | 'refused' | 'error'): void {
    this.witness.inc({ witness, way, outcome });
  }

  /** The counters and gauges as plain numbers, for the console's sample ring (no prom-client involved). */
  reading(): MetricsReading {
    const rows = <K extends string>(tally: Tally, key: K) =>
      [...tally.values.values()].map(({ labels, n }) => ({ [key]: labels[key], n }) as Record<K, string> & { n: number });
    return {
      http: rows(this.http, 'route'),
      sockets: { open: this.hub.openCount(), authenticated: this.hub.authenticatedCount() },
      commit: { bounds: COMMIT_BUCKETS, buckets: [...this.commit.buckets], count: this.commit.count },
      bridge: rows(this.bridge, 'outcome'),
      safety: rows(this.safety, 'decision'),
      media: rows(this.media, 'via'),
      threadsQueued: this.loop.models.phoneThreads.queuedCount(),
    };
  }

  get contentType(): string {
    return 'text/plain; version=0.0.4; charset=utf-8';
  }

  /** The Prometheus text: prom-client's registry (built on the first scrape) and the commit histogram. */
  async render(): Promise<string> {
    const registry = (this.registry ??= this.buildRegistry());
    const c = this.commit;
    const lines = [
      '# HELP svc_event_commit_seconds Time from append to durable (the group commit and its fdatasync), per decision',
      '# TYPE svc_event_commit_seconds histogram',
      ...COMMIT_BUCKETS.map((le, i) => `svc_event_commit_seconds_bucket{le="${le}"} ${c.buckets[i]}`),
      `svc_event_commit_seconds_bucket{le="+Inf"} ${c.count}`,
      `svc_event_commit_seconds_sum ${c.sum}`,
      `svc_event_commit_seconds_count ${c.count}`,
    ];
    return `${await registry.metrics()}\n${lines.join('\n')}\n`;
  }

  private buildRegistry(): Prom.Registry {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const prom = require('prom-client') as typeof Prom;
    const registry = new prom.Registry();
    const counter = (name: string, help: string, labelNames: string[], tally: Tally) =>
      new prom.Counter({
        name,
        help,
        labelNames,
        registers: [registry],
        collect() {
          this.reset();
          for (const { labels, n } of tally.values.values()) this.inc(labels, n);
        },
      });
    counter('svc_http_requests_total', 'HTTP requests answered, by method, route template and status', ['method', 'route', 'status'], this.http);
    counter('svc_events_appended_total', 'Durable events appended to the log, by type', ['type'], this.events);
    counter('svc_bridge_commands_total', 'Device Control commands by outcome', ['outcome'], this.bridge);
    counter('svc_bridge_safety_decisions_total', 'Safety pipeline decisions', ['decision'], this.safety);
    counter('svc_media_bytes_served_total', 'Media bytes served, by token or by path', ['via'], this.media);
    counter('svc_desktop_calls_total', 'Desktop tool calls by outcome', ['outcome'], this.desktop);
    counter(
      'svc_witness_answers_total',
      'Transparency-log witnesses: cosignatures, refusals (alert on these) and failed submissions, by witness and way (push, pull)',
      ['witness', 'way', 'outcome'],
      this.witness,
    );
    const phones = this.hub;
    const models = () => this.loop.models;
    new prom.Gauge({
      name: 'svc_phone_sockets',
      help: 'Phone sockets open, and authenticated',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        this.set({ state: 'open' }, phones.openCount());
        this.set({ state: 'authenticated' }, phones.authenticatedCount());
      },
    });
    new prom.Gauge({
      name: 'svc_terminal_shells',
      help: 'Terminal shells running',
      registers: [registry],
      collect() {
        this.set(models().terminal.allShells().length);
      },
    });
    new prom.Gauge({
      name: 'svc_threads_queue_depth',
      help: 'Agent-to-phone messages queued for a phone',
      registers: [registry],
      collect() {
        this.set(models().phoneThreads.queuedCount());
      },
    });
    const loop = this.loop;
    new prom.Gauge({
      name: 'svc_event_log_last_seq',
      help: 'The last durable seq of the event log, by the store it is in (file or postgres)',
      labelNames: ['store'],
      registers: [registry],
      collect() {
        this.reset();
        this.set({ store: loop.storeKind }, loop.lastSeq);
      },
    });
    prom.collectDefaultMetrics({ register: registry, prefix: 'svc_' });
    return registry;
  }
}
