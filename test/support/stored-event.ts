import type { StoredRelayEvent } from '@svc/events';

/** A stored record (seq 7, fixed id, time and hashes) of any type and data: for code that reads records, not for rules. */
export const storedEvent = (type: string, data: Record<string, unknown>, actor = 'system'): StoredRelayEvent =>
  ({
    seq: 7,
    id: 'id-7',
    at: '2026-03-01T12:00:00.000Z',
    type,
    actor,
    data,
    v: 1,
    prev: '0'.repeat(64),
    hash: 'a'.repeat(64),
  }) as unknown as StoredRelayEvent;
