import { PgEventStore } from '@svc/events';
import type { RelayConfig } from '../config/relay-config';
import type { StoreFactory } from './command-loop';

/** RELAY_EVENT_STORE=postgres://...: the log and its snapshots in a PostgreSQL database (led, or followed by a standby). */
export function postgresStore(url: string, standby?: RelayConfig['standby']): StoreFactory {
  return ({ onDurable, onFollowed, onFatal, mac, snapshotCipher }) => {
    const store = new PgEventStore({
      url,
      onDurable,
      onFollowed,
      onFatal,
      standby: standby?.enabled === true,
      pollMs: standby?.pollMs,
      leaseMs: standby?.leaseMs,
    });
    return { store, snapshots: store.snapshots(mac, snapshotCipher) };
  };
}
