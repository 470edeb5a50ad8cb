import { EventList } from '@/components/event-list';
import { useLive } from '@/lib/live-context';
import { Link } from '@/lib/router';

/** The newest events, on every page (hidden on narrow windows). */
export function Ticker() {
  const live = useLive();
  return (
    <aside className="ticker" aria-label="Latest events">
      <div className="ticker-head">
        <span>Live</span>
        <Link to="/events" className="muted small">
          all events →
        </Link>
      </div>
      {live.events.length ? <EventList events={live.events.slice(0, 30)} dense /> : <p className="muted small">Events appear here as they happen.</p>}
    </aside>
  );
}
