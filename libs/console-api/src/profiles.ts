/**
 * The Profiles page (`/console/api/profiles`): the catalog as phones see it, each profile's relay
 * enablement, its SOUL and memory files, and the writes made through the relay. Types only; times are
 * epoch seconds. Never a key: `api_server_key_present` says only whether one is set.
 */

/** `enabled`: the config lists the relay's plugin; `absent`: it does not; `disabled`: it says the relay is not for this agent. */
export type RelayPluginStateView = 'enabled' | 'disabled' | 'absent';

export type ProfileRowView = {
  name: string;
  is_default: boolean;
  relay: RelayPluginStateView;
  /** In `auth.ok.profiles` (every readable profile whose config does not disable the relay). */
  offered: boolean;
  /** Its config read as a mapping; false: phones get no row for it. */
  readable: boolean;
  /** The config file on this host (the operator's view). */
  config_file: string;
  model: string | null;
  provider: string | null;
  description: string | null;
  has_soul: boolean;
  skill_count: number;
  has_avatar: boolean;
  api_server: { enabled: boolean; url: string | null; key_present: boolean; running: boolean };
};

export type ProfileWriteRow = { profile: string; file: string; sha256: string; bytes: number; at: number; actor: string };

export type ProfileEnablementRow = { profile: string; was: string; at: number; actor: string };

export type ProfilesView = {
  ok: true;
  server_time: number;
  /** RELAY_PROFILE_DISCOVERY: off, phones are offered no profiles and the relay does not look. */
  discovery: boolean;
  /** When the catalog phones were last told of changed (null: never recorded). */
  changed_at: number | null;
  offered: number;
  /** Where profiles are looked for (the service home). */
  home: string;
  profiles: ProfileRowView[];
  /** The newest write of each profile file through the relay, newest first. */
  writes: ProfileWriteRow[];
  enablements: ProfileEnablementRow[];
};

/** A profile file as the console reads it: the text (cut past the cap: `truncated`) and its ETag for an edit. */
export type ProfileFileView = {
  path: string;
  content: string;
  exists: boolean;
  size_bytes: number;
  truncated: boolean;
  /**
   * The bytes of it phones (and this page) are shown (RELAY_PROFILE_*_MAX_BYTES); a file larger is cut, and a
   * phone's save of it is refused (409 `profile.shown_in_part`), so it is edited on the host.
   */
  shown_bytes: number;
  /** null when the file does not exist (an edit then creates it). */
  etag: string | null;
};

export type ProfileSoulView = { ok: true; profile: string; soul: ProfileFileView };

export type ProfileMemoryView = { ok: true; profile: string; entries: Array<ProfileFileView & { filename: string }> };

/** An edit: the same write as `PUT /api/profiles/{name}/soul|memory/{file}`, with the read's ETag as its If-Match. */
export type ProfileWriteAnswer = { ok: true; profile: string; path: string; bytes_written: number; etag: string };

export type ProfileEnableAnswer = { ok: true; profile: string; was: RelayPluginStateView; changed: boolean; backup: string | null };

export type ProfileRescanAnswer = { ok: true; profiles: number; offered: number };
