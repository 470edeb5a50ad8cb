import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { Clock } from '../common/loop/clock';
import type { RelayConfig } from '../common/config/relay-config';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { AgentHome, type StoreFile } from './agent-home';
import { readImageActivity, readPhoneSessions, type PhoneSession, type StoreActivity } from './agent-queries';
import { StateDbPool } from './state-db';

/** What a response says of the agent's store: used, or why not (in words a phone may see: never a host path). */
export type StoreStatus = { available: true; [k: string]: unknown } | { available: false; reason: string; [k: string]: unknown };

export type Unreadable = { profile: string; reason: string };

/**
 * The agent host's own session stores, read-only: the phone sessions and their chat ids (`/phone/threads`)
 * and a session's image generations (`/chat/image-activity`). Where they are: AgentHome; how they are
 * opened: StateDbPool; what is read: agent-queries.
 */
@Injectable()
export class AgentSessionStore implements OnModuleDestroy {
  readonly home: AgentHome;
  private readonly pool: StateDbPool;

  constructor(@Inject(RELAY_CONFIG) config: RelayConfig, clock: Clock, @Inject(LOGGER) logger: Logger) {
    this.home = new AgentHome(config.agentStateDb ?? path.join(path.dirname(config.svcConfigPath), 'state.db'));
    this.pool = new StateDbPool(
      this.home.home,
      () => clock.now().getTime(),
      (store, reason, err) => logger.debug({ store: store.file, reason, err: (err as Error)?.message }, 'agent session store not read'),
    );
  }

  onModuleDestroy(): void {
    this.pool.close();
  }

  /**
   * Every phone session with a chat id across the root store and each profile's (root first; a session id
   * seen in an earlier store is not taken again). A store that does not exist is skipped quietly; one that
   * exists but cannot be read is named in `unreadable`.
   */
  phoneSessions(): { status: StoreStatus; sessions: PhoneSession[] } {
    const seen = new Map<string, PhoneSession>();
    const unreadable: Unreadable[] = [];
    let read = 0;
    for (const store of this.home.allStores()) {
      const r = this.pool.read(store, (_db, schema, prepare) => readPhoneSessions(schema, prepare));
      if (!r.ok) {
        if (r.reason !== 'not found') unreadable.push({ profile: store.profile, reason: r.reason });
        continue;
      }
      read++;
      for (const s of r.value) if (!seen.has(s.sessionId)) seen.set(s.sessionId, s);
    }
    const extra = unreadable.length ? { unreadable } : {};
    const status: StoreStatus = read
      ? { available: true, stores: read, sessions: seen.size, ...extra }
      : { available: false, reason: unreadable[0]?.reason ?? 'not found', ...extra };
    return { status, sessions: [...seen.values()] };
  }

  /** The store `profile` names: `default` is the bare agent's (the `active_profile` marker); null: no such profile. */
  storeOf(profile: string): StoreFile | null {
    return profile === 'default' ? this.home.effectiveDefault() : this.home.profileStore(profile);
  }

  /** One session's image generations from a store (see readImageActivity). */
  imageActivity(store: StoreFile, sessionId: string, since: number): { status: StoreStatus; activities: StoreActivity[] } {
    const r = this.pool.read(store, (_db, schema, prepare) => readImageActivity(schema, prepare, sessionId, since));
    return r.ok
      ? { status: { available: true, profile: store.profile }, activities: r.value }
      : { status: { available: false, reason: r.reason }, activities: [] };
  }
}
