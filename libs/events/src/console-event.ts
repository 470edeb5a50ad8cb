import type { RelayEventType } from './relay-event';

export type { RelayEventType };

/**
 * An event as the operator console receives it (`/console/api/events` and the stream): digests cut to 8
 * characters, anything secret-named withheld. Types only, so the console's browser build can import it.
 */
export type ConsoleEvent = {
  seq: number;
  id: string;
  at: string;
  /** A `RelayEventType`, or one a newer relay wrote (the console shows those generically). */
  type: string;
  actor: string;
  data: Record<string, unknown>;
  /** The first 12 hex characters of the record's chain hash (enough to compare two views). */
  hash: string;
};
