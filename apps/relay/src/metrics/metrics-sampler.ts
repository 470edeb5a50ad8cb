import { SampleRing } from './sample-ring';

/** What the metrics registry holds at one moment: cumulative counters, gauges, the commit histogram. */
export type MetricsReading = {
  /** Requests answered, by route template (`/media/:token`; `unmatched` for a 404 on no route). */
  http: ReadonlyArray<{ route: string; n: number }>;
  sockets: { open: number; authenticated: number };
  /** Cumulative bucket counts (`le` each bound, in seconds) and the total count. */
  commit: { bounds: readonly number[]; buckets: readonly number[]; count: number };
  bridge: ReadonlyArray<{ outcome: string; n: number }>;
  safety: ReadonlyArray<{ decision: string; n: number }>;
  media: ReadonlyArray<{ via: string; n: number }>;
  threadsQueued: number;
};

export type SamplerOptions = { intervalMs: number; capacity: number; maxKeys: number };

/** Every 2 s for 10 minutes, at most 64 series: (64 + 1) × 300 × 8 B ≈ 152 KiB, allocated as keys appear. */
export const DEFAULT_SAMPLING: SamplerOptions = { intervalMs: 2000, capacity: 300, maxKeys: 64 };

/** The series every sample may hold before any family is seen, so "other" keys always have room. */
const FIXED_KEYS = [
  'sockets:open',
  'sockets:authenticated',
  'commit:p50',
  'commit:p99',
  'threads:queued',
  'http:other',
  'bridge:other',
  'media:other',
];

/** `/media/:token` → `media`, `/console/api/overview` → `console`, `/` → `/`. */
export function routeFamily(route: string): string {
  if (route === 'unmatched') return 'unmatched';
  const first = route.split('/').find((s) => s !== '');
  return first === undefined ? '/' : first.startsWith(':') ? 'param' : first.toLowerCase();
}

/**
 * The quantile `q` of the observations between two readings of a cumulative histogram (linear within a
 * bucket, as Prometheus's histogram_quantile does); past the last finite bound, that bound. Null: none.
 */
export function histogramQuantile(bounds: readonly number[], buckets: readonly number[], count: number, q: number): number | null {
  if (count <= 0) return null;
  const rank = q * count;
  for (let i = 0; i < bounds.length; i++) {
    if (buckets[i] >= rank) {
      const below = i === 0 ? 0 : buckets[i - 1];
      const lower = i === 0 ? 0 : bounds[i - 1];
      const inBucket = buckets[i] - below;
      return inBucket <= 0 ? bounds[i] : lower + ((bounds[i] - lower) * (rank - below)) / inBucket;
    }
  }
  return bounds[bounds.length - 1];
}

/**
 * Turns readings of the relay's metrics into a ring of samples: rates per second (per minute for Device
 * Control, rare by nature) from counter deltas over the time really elapsed, gauges as read, and the commit
 * latency p50/p99 of the commits since the last sample. Time comes in as an argument: a sample is taken
 * when `intervalMs` has passed since the last one (give or take a tenth), so a manual clock drives it without sleeping.
 */
export class MetricsSampler {
  readonly ring: SampleRing;
  private last: { t: number; reading: MetricsReading } | null = null;

  constructor(readonly opts: SamplerOptions = DEFAULT_SAMPLING) {
    // The fixed keys first, so a flood of route families can never crowd out the charts' own series.
    this.ring = new SampleRing(opts.capacity, opts.maxKeys, FIXED_KEYS);
  }

  /** Takes a sample if one is due; the first reading (and one after the clock went back) only sets the baseline. */
  tick(nowMs: number, reading: MetricsReading): boolean {
    const last = this.last;
    // A tenth of the interval early still counts: the scheduler's 1 s timer drifts by a few ms either way,
    // and a sample skipped for 1999 ms would leave a 3 s gap.
    if (last !== null && nowMs >= last.t && nowMs - last.t < this.opts.intervalMs * 0.9) return false;
    this.last = { t: nowMs, reading };
    if (last === null || nowMs < last.t) return false;
    this.ring.push(nowMs, this.sample(last.reading, reading, (nowMs - last.t) / 1000));
    return true;
  }

  private sample(before: MetricsReading, now: MetricsReading, seconds: number): Map<string, number | null> {
    const out = new Map<string, number | null>();
    let room = this.ring.room;
    // A key past the ring's cap is folded into its chart's "other" (whose column is reserved).
    const add = (key: string, other: string, v: number) => {
      let k = key;
      if (!this.ring.has(key) && !out.has(key)) {
        if (room > 0) room--;
        else k = other;
      }
      out.set(k, ((out.get(k) as number | undefined) ?? 0) + v);
    };
    const perSecond = (n: number) => Math.max(0, n) / seconds;
    for (const [family, n] of deltas(familyTotals(before.http), familyTotals(now.http))) add(`http:${family}`, 'http:other', perSecond(n));
    for (const [outcome, n] of deltas(byKey(before.bridge, 'outcome'), byKey(now.bridge, 'outcome')))
      add(`bridge:${outcome}`, 'bridge:other', perSecond(n) * 60);
    for (const [decision, n] of deltas(byKey(before.safety, 'decision'), byKey(now.safety, 'decision')))
      add(`bridge:safety ${decision}`, 'bridge:other', perSecond(n) * 60);
    for (const [via, n] of deltas(byKey(before.media, 'via'), byKey(now.media, 'via'))) add(`media:${via}`, 'media:other', perSecond(n));
    out.set('sockets:open', now.sockets.open);
    out.set('sockets:authenticated', now.sockets.authenticated);
    out.set('threads:queued', now.threadsQueued);
    const c0 = before.commit;
    const c1 = now.commit;
    // A registry that restarted its counts (never today) reads as a fresh start, not as negative commits.
    const restarted = c1.count < c0.count;
    const buckets = c1.buckets.map((n, i) => (restarted ? n : n - c0.buckets[i]));
    const count = restarted ? c1.count : c1.count - c0.count;
    const ms = (q: number) => {
      const s = histogramQuantile(c1.bounds, buckets, count, q);
      return s === null ? null : Math.round(s * 1e6) / 1e3;
    };
    out.set('commit:p50', ms(0.5));
    out.set('commit:p99', ms(0.99));
    return out;
  }
}

function familyTotals(http: MetricsReading['http']): Map<string, number> {
  const out = new Map<string, number>();
  for (const { route, n } of http) out.set(routeFamily(route), (out.get(routeFamily(route)) ?? 0) + n);
  return out;
}

function byKey<K extends string>(rows: ReadonlyArray<Record<K, string> & { n: number }>, key: K): Map<string, number> {
  return new Map(rows.map((r) => [r[key], r.n]));
}

/** Per key, how much the counter grew (a key new since the last reading counts from 0). */
function deltas(before: Map<string, number>, now: Map<string, number>): Array<[string, number]> {
  return [...now].map(([k, n]) => [k, n - (before.get(k) ?? 0)]);
}
