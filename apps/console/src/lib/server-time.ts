import { useEffect, useState } from 'react';

/**
 * The relay's clock, not the browser's: every API answer carries `server_time` (epoch seconds), and
 * countdowns and "3 min ago" are computed against it, so a skewed laptop clock shows the truth.
 */
let offsetMs = 0;
let known = false;

export function noteServerTime(serverEpochSeconds: unknown): void {
  if (typeof serverEpochSeconds !== 'number' || !Number.isFinite(serverEpochSeconds)) return;
  const next = serverEpochSeconds * 1000 - Date.now();
  // Seconds are truncated on the wire: only move when the estimate is off by more than that.
  if (!known || Math.abs(next - offsetMs) > 1500) offsetMs = next;
  known = true;
}

export function serverNow(): number {
  return Date.now() + offsetMs;
}

/** Re-renders every `intervalMs` with the relay's current time in ms. */
export function useServerNow(intervalMs = 1000): number {
  const [now, setNow] = useState(serverNow);
  useEffect(() => {
    const t = setInterval(() => setNow(serverNow()), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  return now;
}
