import type { Ev } from '../event';

/**
 * A profile file was written through the relay (`PUT /api/profiles/{name}/soul|memory/{filename}`). The
 * file is the state; the event is its audit: which file, its new SHA-256 and size, never its text.
 */
export type ProfileFileWritten = Ev<'profile.file_written', { profile: string; file: string; sha256: string; bytes: number; replaced: boolean }>;

/** Whether a profile's config enables the relay's plugin (`plugins.enabled` / `plugins.disabled`). */
export type RelayPluginState = 'enabled' | 'disabled' | 'absent';

/**
 * One profile as the relay last saw it: its name, the relay plugin's state in its config, and the SHA-256
 * of the row phones receive (`auth.ok.profiles[]`, `profiles.updated`): the row itself (model, SOUL text,
 * API-server address) is derived from the files and never enters the log.
 */
export type ProfileCatalogEntry = { name: string; relay: RelayPluginState; sha256: string };

/**
 * The profiles the relay offers phones changed (a scan at start, the 30 s rescan, a write through the
 * relay, an enablement). Phones connected at that moment get `pairing/profiles.updated`.
 */
export type ProfileCatalogChanged = Ev<
  'profile.catalog_changed',
  { reason: 'startup' | 'rescan' | 'file_written' | 'relay_enabled'; profiles: ProfileCatalogEntry[]; offered: number }
>;

/**
 * `svc relay profiles enable` added the relay plugin to a profile's `plugins.enabled` (and took it out of
 * `plugins.disabled`): the config's new digest and where the previous text was kept.
 */
export type ProfileRelayEnabled = Ev<
  'profile.relay_enabled',
  { profile: string; file: string; was: Exclude<RelayPluginState, 'enabled'>; sha256: string; bytes: number; backup: string }
>;

export type ProfileEvent = ProfileFileWritten | ProfileCatalogChanged | ProfileRelayEnabled;
