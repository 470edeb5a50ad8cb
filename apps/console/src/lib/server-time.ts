import { useEffect, useState, useSyncExternalStore } from 'react';

/**
 * The relay's clock, not the browser's: every API answer carries `server_time` (epoch seconds), and
 * countdowns and "3 min ago" are computed against it, so a skewed laptop clock shows the truth.
 */
let offsetMs = 0;
let known = false;
const listeners = new Set<() => void>();

export function noteServerTime(serverEpochSeconds: unknown): void {
  if (typeof serverEpochSeconds !== 'number' || !Number.isFinite(serverEpochSeconds)) return;
  const next = serverEpochSeconds * 1000 - Date.now();
  // Seconds are truncated on the wire: only move when the estimate is off by more than that.
  if (known && Math.abs(next - offsetMs) <= 1500) return;
  offsetMs = next;
  known = true;
  listeners.forEach((l) => l());
}

export function serverNow(): number {
  return Date.now() + offsetMs;
}

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};

/** Re-renders every `intervalMs`, and at once when the relay's clock is first learned or jumps. */
export function useServerNow(intervalMs = 1000): number {
  const offset = useSyncExternalStore(subscribe, () => offsetMs);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  void tick;
  // eslint-disable-next-line react-hooks/purity -- a clock: every render shows the time it happens at (the ticks only make sure one does); no React Compiler memoises this app
  return Date.now() + offset;
}
