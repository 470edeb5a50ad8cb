/**
 * Timing checks that hold on a loaded machine (docs/TESTING.md). Wall time is what other processes take
 * from us: two busy loops beside the suite stretched a 60 ms sanitizer run to 1,116 ms. CPU time
 * (process.cpuUsage: user + system of this process, microsecond precision) is what the code itself
 * costs, so a bound on it catches a slow algorithm without catching a busy neighbour.
 */

/** CPU milliseconds `fn` costs this process. */
export function cpuMs(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** The least CPU time of `runs` calls: a garbage collection or a cold cache lands on one run, not all. */
export function bestCpuMs(fn: () => void, runs = 5): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) best = Math.min(best, cpuMs(fn));
  return best;
}

/**
 * How much more CPU `work(input(n))` costs than `work(input(n / 4))`, best of five runs each: about 4 when
 * the work is linear in n, about 16 when quadratic. Assert it below 10 to catch super-linear growth at a
 * size where even a quadratic finishes in seconds, before trying the size the bound is about.
 */
export function growth<T>(input: (n: number) => T, work: (x: T) => unknown, n: number): number {
  const small = input(n / 4);
  const large = input(n);
  work(small); // the first call compiles; it is not what is measured
  const base = bestCpuMs(() => work(small));
  const grown = bestCpuMs(() => work(large));
  // A run too short for the clock reads as 0: count it as one tick, so the ratio stays finite.
  return grown / Math.max(base, 0.001);
}

/**
 * CPU milliseconds this process spends while `work` runs: for a relay started in the test's own process
 * (startRelay), what a request or a start costs the relay, whoever else wants the cores meanwhile. It
 * counts whatever else the process does in that time, so measure one thing at a time.
 */
export async function cpuMsDuring<T>(work: () => Promise<T>): Promise<{ result: T; cpuMs: number }> {
  const before = process.cpuUsage();
  const result = await work();
  const used = process.cpuUsage(before);
  return { result, cpuMs: (used.user + used.system) / 1000 };
}
