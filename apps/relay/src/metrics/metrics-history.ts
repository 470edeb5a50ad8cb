import { Injectable } from '@nestjs/common';
import type { MetricsChart, MetricsSeries } from '@svc/console-api';
import { Clock } from '../common/loop/clock';
import { Scheduler } from '../common/loop/scheduler';
import { MetricsSampler } from './metrics-sampler';
import { MetricsService } from './metrics.service';

/** How many series a chart of families shows: the busiest over the window, the rest summed as "other". */
const TOP = 6;

type ChartDef = Omit<MetricsChart, 'series' | 'apart'> & {
  prefix: string;
  fixed?: Array<{ key: string; label: string }>;
  /** A key counted but kept out of the lines (and of "other"), reported beside them. */
  apart?: string;
};

const CHARTS: ChartDef[] = [
  // The console's own polling (its route family, /console/...) would dominate the chart that shows it.
  { id: 'http', title: 'Requests by route family', unit: 'req/s', prefix: 'http:', apart: 'http:console' },
  {
    id: 'sockets',
    title: 'Phone sockets',
    unit: 'sockets',
    prefix: 'sockets:',
    fixed: [
      { key: 'sockets:open', label: 'open' },
      { key: 'sockets:authenticated', label: 'authenticated' },
    ],
  },
  {
    id: 'commit',
    title: 'Event commit latency',
    unit: 'ms',
    prefix: 'commit:',
    fixed: [
      { key: 'commit:p50', label: 'p50' },
      { key: 'commit:p99', label: 'p99' },
    ],
  },
  { id: 'bridge', title: 'Device Control commands and safety decisions', unit: 'per min', prefix: 'bridge:' },
  { id: 'media', title: 'Media bytes served', unit: 'bytes/s', prefix: 'media:' },
  { id: 'threads', title: 'Threads queue', unit: 'messages', prefix: 'threads:', fixed: [{ key: 'threads:queued', label: 'queued' }] },
];

/**
 * The console's Metrics page: a ring of samples of the relay's own metrics (every 2 s, the last 10 minutes),
 * taken on the scheduler's tick by the injected clock, so a reloaded page draws full charts at once and a
 * test moves time instead of sleeping. Memory is bounded by the ring (see MetricsSampler).
 */
@Injectable()
export class MetricsHistory {
  readonly sampler = new MetricsSampler();

  constructor(
    private readonly metrics: MetricsService,
    private readonly clock: Clock,
    scheduler: Scheduler,
  ) {
    this.tick();
    scheduler.onTick(() => {
      this.tick();
    });
  }

  /** Samples if one is due. */
  tick(): boolean {
    return this.sampler.tick(this.clock.now().getTime(), this.metrics.reading());
  }

  /** Epoch seconds of each sample, oldest first, and each chart's series aligned with them. */
  view(): { times: number[]; charts: MetricsChart[] } {
    const ring = this.sampler.ring;
    const times = ring.timeline().map((t) => t / 1000);
    const keys = ring.keys();
    const charts = CHARTS.map(({ prefix, fixed, apart, ...chart }): MetricsChart => {
      if (fixed) return { ...chart, series: fixed.map(({ key, label }) => ({ id: key, label, values: ring.values(key) })) };
      const series = keys
        .filter((k) => k.startsWith(prefix) && !k.endsWith(':other') && k !== apart)
        .map((k) => ({ id: k, label: k.slice(prefix.length), values: ring.values(k) }))
        .sort((a, b) => total(b) - total(a) || a.label.localeCompare(b.label));
      const shown = series.slice(0, TOP);
      const rest = [...series.slice(TOP), { id: `${prefix}other`, label: 'other', values: ring.values(`${prefix}other`) }];
      const other = sumSeries(rest, times.length);
      return {
        ...chart,
        series: other.some((v) => v !== null && v > 0) ? [...shown, { id: `${prefix}other`, label: 'other', values: other }] : shown,
        ...(apart ? { apart: { id: apart, label: apart.slice(prefix.length), values: ring.values(apart) } } : {}),
      };
    });
    return { times, charts };
  }
}

function total(s: MetricsSeries): number {
  return s.values.reduce<number>((n, v) => n + (v ?? 0), 0);
}

function sumSeries(series: MetricsSeries[], length: number): Array<number | null> {
  const out = new Array<number | null>(length).fill(null);
  for (const s of series) s.values.forEach((v, i) => v !== null && (out[i] = (out[i] ?? 0) + v));
  return out;
}
