import type { ProfileCatalogEntry, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';

type MutableProfileFileRecord = { profile: string; file: string; sha256: string; bytes: number; at: number; actor: string };
type MutableProfileEnablement = { profile: string; was: string; at: number; actor: string };

/** What this projection hands out, read-only: only its events change them. */
export type ProfileFileRecord = DeepReadonly<MutableProfileFileRecord>;
export type ProfileEnablement = DeepReadonly<MutableProfileEnablement>;

type State = {
  catalog: ProfileCatalogEntry[];
  catalogAt: number | null;
  offered: number;
  files: MutableProfileFileRecord[];
  enabled: MutableProfileEnablement[];
};

/**
 * Profiles as the log knows them: the catalog last offered to phones (names, relay-plugin state, row
 * digests), the last write of each profile file through the relay, and the enablements made by
 * `svc relay profiles enable`. Durable state (not reset at `relay.started`): the files outlive a restart.
 */
export class ProfilesProjection implements Projection<State> {
  private catalog: ProfileCatalogEntry[] = [];
  private catalogAt: number | null = null;
  private offeredCount = 0;
  private readonly files = new Map<string, MutableProfileFileRecord>();
  private readonly enabled = new Map<string, MutableProfileEnablement>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'profile.catalog_changed':
        this.catalog = e.data.profiles.map((p) => ({ ...p }));
        this.catalogAt = eventAtMs(e);
        this.offeredCount = e.data.offered;
        break;
      case 'profile.file_written':
        this.files.set(`${e.data.profile}/${e.data.file}`, {
          profile: e.data.profile,
          file: e.data.file,
          sha256: e.data.sha256,
          bytes: e.data.bytes,
          at: eventAtMs(e),
          actor: e.actor,
        });
        break;
      case 'profile.relay_enabled':
        this.enabled.set(e.data.profile, { profile: e.data.profile, was: e.data.was, at: eventAtMs(e), actor: e.actor });
        break;
      default:
        break;
    }
  }

  /** The catalog last recorded (what phones were last told), in its order. */
  entries(): ReadonlyArray<Readonly<ProfileCatalogEntry>> {
    return this.catalog;
  }

  /** How many rows phones were offered at the last change (profiles whose config disables the relay are not). */
  get offered(): number {
    return this.offeredCount;
  }

  get changedAt(): number | null {
    return this.catalogAt;
  }

  /** The last write of each profile file through the relay, by `profile/file`. */
  writes(): readonly ProfileFileRecord[] {
    return [...this.files.values()].sort((a, b) => (a.profile + a.file).localeCompare(b.profile + b.file));
  }

  enablements(): readonly ProfileEnablement[] {
    return [...this.enabled.values()].sort((a, b) => a.profile.localeCompare(b.profile));
  }

  snapshot(): State {
    return {
      catalog: this.catalog,
      catalogAt: this.catalogAt,
      offered: this.offeredCount,
      files: [...this.files.values()],
      enabled: [...this.enabled.values()],
    };
  }

  restore(s: State): void {
    this.catalog = s.catalog ?? [];
    this.catalogAt = s.catalogAt ?? null;
    this.offeredCount = s.offered ?? 0;
    this.files.clear();
    for (const f of s.files ?? []) this.files.set(`${f.profile}/${f.file}`, f);
    this.enabled.clear();
    for (const x of s.enabled ?? []) this.enabled.set(x.profile, x);
  }
}
