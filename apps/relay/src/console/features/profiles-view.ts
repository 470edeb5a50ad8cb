import { epoch, type ProfileFileRecord } from '@svc/domain';
import type { ProfileRowView, ProfileWriteRow } from '@svc/console-api';
import type { ScannedProfile } from '../../profiles/profile-row';

/** A scanned profile as the Profiles page shows it: the fields of the row phones get (never the API key, never the SOUL's text). */
export function profileRowView(p: ScannedProfile, offered: boolean, configFile: string): ProfileRowView {
  const r = p.row;
  return {
    name: p.name,
    is_default: p.name === 'default',
    relay: p.relay,
    offered,
    readable: r !== null,
    config_file: configFile,
    model: r?.model ?? null,
    provider: r?.provider || null,
    description: r?.description || null,
    has_soul: r?.has_soul ?? false,
    skill_count: r?.skill_count ?? 0,
    has_avatar: r?.has_avatar ?? false,
    api_server: {
      enabled: r?.api_server_enabled ?? false,
      url: r?.api_server_url ?? null,
      key_present: r?.api_server_key_present ?? false,
      running: r?.gateway_running ?? false,
    },
  };
}

export function profileWriteView(w: ProfileFileRecord): ProfileWriteRow {
  return { profile: w.profile, file: w.file, sha256: w.sha256.slice(0, 12), bytes: w.bytes, at: epoch(w.at), actor: w.actor };
}
