import { PgEventStore } from '@svc/events';
import type { StoreFactory } from './command-loop';

/** RELAY_EVENT_STORE=postgres://...: the log and its snapshots in a PostgreSQL database. */
export function postgresStore(url: string): StoreFactory {
  return ({ onDurable, onFatal, mac, snapshotCipher }) => {
    const store = new PgEventStore({ url, onDurable, onFatal });
    return { store, snapshots: store.snapshots(mac, snapshotCipher) };
  };
}
