import { Observable, Subject, filter } from 'rxjs';
import type { StoredEvent } from './event';
import type { RelayEvent, RelayEventType } from './relay-event';

export type StoredRelayEvent = StoredEvent<RelayEvent>;
export type StoredOf<T extends RelayEventType> = StoredEvent<Extract<RelayEvent, { type: T }>>;

/** The in-process bus: only durable events are published, in seq order. */
export class EventBus {
  private readonly subject = new Subject<StoredRelayEvent>();
  readonly events$: Observable<StoredRelayEvent> = this.subject.asObservable();

  publish(event: StoredRelayEvent): void {
    this.subject.next(event);
  }

  ofType<T extends RelayEventType>(...types: T[]): Observable<StoredOf<T>> {
    const wanted = new Set<string>(types);
    return this.events$.pipe(filter((e): e is StoredOf<T> => wanted.has(e.type)));
  }

  complete(): void {
    this.subject.complete();
  }
}
