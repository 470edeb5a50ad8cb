import { PgEventStore, type MemberSource } from '@svc/events';
import { createHash } from 'node:crypto';
import * as os from 'node:os';
import { relayDir } from '../config/config';
import type { RelayConfig } from '../config/relay-config';
import type { Clock } from './clock';
import type { StoreFactory } from './command-loop';

/** RELAY_EVENT_STORE=postgres://...: the log and its snapshots in a PostgreSQL database (led, or followed by a standby). */
export function postgresStore(url: string, standby?: RelayConfig['standby'], member?: MemberSource): StoreFactory {
  return ({ onDurable, onFollowed, onFatal, mac, snapshotCipher }) => {
    const store = new PgEventStore({
      url,
      onDurable,
      onFollowed,
      onFatal,
      standby: standby?.enabled === true,
      pollMs: standby?.pollMs,
      leaseMs: standby?.leaseMs,
      member,
    });
    return { store, snapshots: store.snapshots(mac, snapshotCipher) };
  };
}

/**
 * This relay's row in svc_relay_members: one per relay home (the host and the home's directory, hashed: the
 * path is not shown), named by the host, with the URL it serves on once it listens, on the relay's clock.
 */
export function memberOf(config: RelayConfig, clock: Clock, url: () => string | null): MemberSource {
  const host = os.hostname();
  return {
    id: createHash('sha256')
      .update(`${host}\0${relayDir(config)}`)
      .digest('hex')
      .slice(0, 16),
    name: host,
    url,
    now: () => clock.now().getTime(),
    forgetAfterMs: config.standby.forgetMembersMs,
  };
}
