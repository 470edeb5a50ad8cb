import type { ComponentType, ReactNode } from 'react';
import type { RelayEventType } from '@svc/console-api';

type Family<T> = T extends `${infer F}.${string}` ? `${F}.` : never;

/**
 * An event type (exact), a family prefix (`session.`: every `session.*`) or `*`, read by the one rule of
 * libs/events/src/event-types-match.ts; a typo fails the compile.
 */
export type EventPattern = RelayEventType | Family<RelayEventType> | '*';

/**
 * One console page. A feature folder exports one of these from its index.ts; app/features.ts lists
 * them. The nav shows a page only when the relay reports its id (its `/console/api/<id>` exists).
 */
export type ConsoleFeature = {
  id: string;
  /** Client route under /console. */
  path: string;
  title: string;
  icon: ComponentType;
  Page: ComponentType;
  /** Query key roots to refetch when an event of one of these types (or `prefix.`) arrives. */
  invalidate: Array<{ on: EventPattern[]; queryKey: readonly unknown[] }>;
  /** Optional count badge in the nav (e.g. pending pairing requests). */
  Badge?: () => ReactNode;
};
