import { EventList } from '@/components/event-list';
import { family, summary } from '@/lib/event-summary';
import { timeOfDay } from '@/lib/format';
import { useLive } from '@/lib/live-context';
import { Link } from '@/lib/router';

/**
 * The newest events on every page: a rail on wide screens, a one-line strip at the bottom otherwise
 * (so the tables keep their width at 1280 px).
 */
export function Ticker() {
  const live = useLive();
  const newest = live.events[0];
  return (
    <>
      <aside className="ticker" aria-label="Latest events">
        <div className="ticker-inner">
          <div className="ticker-head">
            <span>Live</span>
            <Link to="/events" className="muted small">
              all events →
            </Link>
          </div>
          {live.events.length ? (
            <EventList events={live.events.slice(0, 30)} dense />
          ) : (
            <p className="muted small">Events appear here as they happen.</p>
          )}
        </div>
      </aside>
      <div className="ticker-strip" aria-label="Latest event">
        {newest ? (
          <Link to="/events" className="ticker-strip-link" key={newest.seq}>
            <span className={`dot ${live.status === 'live' ? 'dot-on' : 'dot-off'}`} aria-hidden />
            <span className="mono muted">{timeOfDay(newest.at)}</span>
            <span className={`type-tag fam-${family(newest.type)}`}>{newest.type}</span>
            <span className="ticker-strip-text">{summary(newest)}</span>
            <span className="muted small ticker-strip-more">#{newest.seq} · all events →</span>
          </Link>
        ) : (
          <span className="muted small">No events yet.</span>
        )}
      </div>
    </>
  );
}
