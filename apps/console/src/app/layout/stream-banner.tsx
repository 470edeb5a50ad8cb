import { useEffect, useState } from 'react';
import { useLive } from '@/lib/live-context';

/** Shown once the stream has been down for 2 s: the data on screen may be stale. */
export function StreamBanner() {
  const live = useLive();
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (live.status !== 'down') return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [live.status]);
  if (live.status !== 'down' || live.downSince === null || now - live.downSince < 2000) return null;
  return (
    <div className="stream-banner" role="alert" data-testid="stream-banner">
      <strong>Live updates paused:</strong> the relay's event stream is unreachable ({Math.round((now - live.downSince) / 1000)} s). Reconnecting;
      nothing will be missed when it is back.
    </div>
  );
}
