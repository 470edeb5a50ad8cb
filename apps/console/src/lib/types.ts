/** One source with the relay: the shape it sends and the event types it writes (types only). */
export type { ConsoleEvent, RelayEventType } from '../../../../libs/events/src/console-event';

export type ChainStatus =
  | { state: 'verified'; verified_to_seq: number; checked_at: number }
  | { state: 'broken'; broken_at_seq: number; segment: string; reason: string; checked_at: number };
