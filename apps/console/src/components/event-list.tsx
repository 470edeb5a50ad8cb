import type { ConsoleEvent } from '@svc/console-api';
import { actorLabel, family, summary } from '@/lib/event-summary';
import { timeOfDay } from '@/lib/format';

/** A compact list of events (overview, ticker): time, type, what happened. */
export function EventList({ events, dense }: { events: ConsoleEvent[]; dense?: boolean }) {
  return (
    <ol className={`event-list ${dense ? 'event-list-dense' : ''}`}>
      {events.map((e) => (
        <li key={e.seq} className="event-item">
          <span className="event-time mono" title={e.at}>
            {timeOfDay(e.at)}
          </span>
          <span className={`type-tag fam-${family(e.type)}`}>{e.type}</span>
          <span className="event-text" title={`#${e.seq} by ${actorLabel(e.actor, e.type)}`}>
            {summary(e)}
          </span>
        </li>
      ))}
    </ol>
  );
}
