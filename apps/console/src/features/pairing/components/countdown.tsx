import { clock } from '@/lib/format';
import { useServerNow } from '@/lib/server-time';

/** Time left until `expiresAt` (epoch seconds) on the relay's clock, as mm:ss or a shrinking bar. */
export function Countdown({ expiresAt, total, bar }: { expiresAt: number; total?: number; bar?: boolean }) {
  const now = useServerNow(1000) / 1000;
  const left = Math.max(0, expiresAt - now);
  const tone = left === 0 ? 'bad' : left < 60 ? 'warn' : 'ok';
  if (bar && total) {
    return (
      <span className={`countdown-bar countdown-${tone}`} aria-hidden>
        <span style={{ width: `${Math.min(100, (left / total) * 100)}%` }} />
      </span>
    );
  }
  return (
    <span className={`countdown countdown-${tone}`} role="timer" aria-live="off">
      {left === 0 ? 'expired' : clock(left)}
    </span>
  );
}
