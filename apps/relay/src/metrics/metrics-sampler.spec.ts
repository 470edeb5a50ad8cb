import { histogramQuantile, MetricsSampler, routeFamily, type MetricsReading } from './metrics-sampler';
import { SampleRing } from './sample-ring';

const BOUNDS = [0.001, 0.002, 0.005, 0.01];

function reading(over: Partial<MetricsReading> = {}): MetricsReading {
  return {
    http: [],
    sockets: { open: 0, authenticated: 0 },
    commit: { bounds: BOUNDS, buckets: [0, 0, 0, 0], count: 0 },
    bridge: [],
    safety: [],
    media: [],
    threadsQueued: 0,
    ...over,
  };
}

const T0 = Date.parse('2026-03-01T12:00:00Z');

describe('SampleRing', () => {
  it('keeps the newest `capacity` samples, oldest first, and drops the rest', () => {
    const ring = new SampleRing(3, 4);
    for (let i = 1; i <= 5; i++) ring.push(i * 1000, new Map([['a', i]]));
    expect(ring.length).toBe(3);
    expect(ring.timeline()).toEqual([3000, 4000, 5000]);
    expect(ring.values('a')).toEqual([3, 4, 5]);
  });

  it('gives a key first seen later nulls before it, and a key missing from a sample a null there', () => {
    const ring = new SampleRing(4, 4);
    ring.push(1, new Map([['a', 1]]));
    ring.push(2, new Map([['b', 2]]));
    ring.push(3, new Map([['a', 3]]));
    expect(ring.values('a')).toEqual([1, null, 3]);
    expect(ring.values('b')).toEqual([null, 2, null]);
    expect(ring.values('never')).toEqual([null, null, null]);
  });

  it('never holds more than maxKeys columns, reserved ones included', () => {
    const ring = new SampleRing(2, 3, ['kept']);
    ring.push(1, new Map(['x', 'y', 'z', 'w'].map((k) => [k, 1])));
    expect(ring.keys()).toEqual(['kept', 'x', 'y']);
    expect(ring.room).toBe(0);
    expect(() => new SampleRing(0, 1)).toThrow(RangeError);
    expect(() => new SampleRing(2, 1, ['a', 'b'])).toThrow(RangeError);
  });
});

describe('routeFamily', () => {
  it.each([
    ['/media/:token', 'media'],
    ['/console/api/overview', 'console'],
    ['/', '/'],
    ['unmatched', 'unmatched'],
    ['/:id', 'param'],
  ])('%s is %s', (route, family) => expect(routeFamily(route)).toBe(family));
});

describe('histogramQuantile', () => {
  it('interpolates within the bucket holding the rank, as Prometheus does', () => {
    // 10 observations: 4 under 1 ms, 4 more under 2 ms, 2 more under 5 ms.
    expect(histogramQuantile(BOUNDS, [4, 8, 10, 10], 10, 0.5)).toBeCloseTo(0.00125);
    expect(histogramQuantile(BOUNDS, [4, 8, 10, 10], 10, 0.99)).toBeCloseTo(0.00485);
  });

  it('says null with no observations and the last finite bound past it', () => {
    expect(histogramQuantile(BOUNDS, [0, 0, 0, 0], 0, 0.5)).toBeNull();
    expect(histogramQuantile(BOUNDS, [0, 0, 0, 0], 3, 0.5)).toBe(0.01);
  });
});

describe('MetricsSampler', () => {
  const opts = { intervalMs: 2000, capacity: 5, maxKeys: 16 };

  it('takes a sample only when the interval has passed on the clock it is given; the first reading is the baseline', () => {
    const s = new MetricsSampler(opts);
    expect(s.tick(T0, reading())).toBe(false);
    expect(s.tick(T0 + 1000, reading())).toBe(false);
    expect(s.tick(T0 + 2000, reading())).toBe(true);
    expect(s.tick(T0 + 2000, reading())).toBe(false);
    expect(s.ring.timeline()).toEqual([T0 + 2000]);
  });

  it("samples on the scheduler's 1 s tick every 2 s even when the timer runs a few ms early", () => {
    const s = new MetricsSampler(opts);
    const ticks = [0, 1003, 1998, 2999, 3995, 5001, 5996];
    for (const t of ticks) s.tick(T0 + t, reading());
    expect(s.ring.timeline().map((t) => t - T0)).toEqual([1998, 3995, 5996]);
  });

  it('stays bounded: many samples later it holds `capacity` of them', () => {
    const s = new MetricsSampler(opts);
    for (let i = 0; i <= 100; i++) s.tick(T0 + i * 2000, reading({ threadsQueued: i }));
    expect(s.ring.length).toBe(5);
    expect(s.ring.values('threads:queued')).toEqual([96, 97, 98, 99, 100]);
  });

  it('turns counters into rates over the time really elapsed, by route family, and Device Control per minute', () => {
    const s = new MetricsSampler(opts);
    s.tick(T0, reading({ http: [{ route: '/media/:token', n: 10 }] }));
    s.tick(
      T0 + 4000,
      reading({
        http: [
          { route: '/media/:token', n: 30 },
          { route: '/media/by-path', n: 2 },
          { route: '/pairing', n: 8 },
        ],
        bridge: [{ outcome: 'answered', n: 2 }],
        safety: [{ decision: 'blocked_package', n: 1 }],
        media: [{ via: 'token', n: 4096 }],
        sockets: { open: 3, authenticated: 2 },
      }),
    );
    const v = (k: string) => s.ring.values(k).at(-1);
    expect(v('http:media')).toBe(5.5); // (20 + 2) / 4 s
    expect(v('http:pairing')).toBe(2);
    expect(v('bridge:answered')).toBe(30); // 2 in 4 s
    expect(v('bridge:safety blocked_package')).toBe(15);
    expect(v('media:token')).toBe(1024);
    expect([v('sockets:open'), v('sockets:authenticated')]).toEqual([3, 2]);
  });

  it('reads commit latency p50/p99 in ms from the commits since the last sample, null when there were none', () => {
    const s = new MetricsSampler(opts);
    s.tick(T0, reading({ commit: { bounds: BOUNDS, buckets: [100, 100, 100, 100], count: 100 } }));
    s.tick(T0 + 2000, reading({ commit: { bounds: BOUNDS, buckets: [104, 108, 110, 110], count: 110 } }));
    s.tick(T0 + 4000, reading({ commit: { bounds: BOUNDS, buckets: [104, 108, 110, 110], count: 110 } }));
    expect(s.ring.values('commit:p50')).toEqual([1.25, null]);
    expect(s.ring.values('commit:p99')).toEqual([4.85, null]);
  });

  it('re-baselines when the clock goes back instead of drawing a negative interval', () => {
    const s = new MetricsSampler(opts);
    s.tick(T0, reading());
    expect(s.tick(T0 - 60_000, reading({ http: [{ route: '/pairing', n: 50 }] }))).toBe(false);
    s.tick(T0 - 58_000, reading({ http: [{ route: '/pairing', n: 54 }] }));
    expect(s.ring.values('http:pairing')).toEqual([2]);
  });

  it('folds families past the key cap into "other", so a flood of routes cannot grow memory', () => {
    const s = new MetricsSampler({ ...opts, maxKeys: 10 }); // 8 fixed keys: room for two families
    const routes = (n: number) => ['a', 'b', 'c', 'd'].map((f) => ({ route: `/${f}`, n }));
    s.tick(T0, reading({ http: routes(0) }));
    s.tick(T0 + 2000, reading({ http: routes(2) }));
    expect(s.ring.keys().filter((k) => k.startsWith('http:'))).toEqual(['http:other', 'http:a', 'http:b']);
    expect(s.ring.values('http:other')).toEqual([2]); // c and d, 1 req/s each
    expect(s.ring.keys()).toHaveLength(10);
  });
});
