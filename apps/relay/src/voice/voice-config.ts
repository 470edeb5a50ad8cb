import type { VoiceSection, VoiceSettingValue } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readYamlMap, rewriteConfigInPlace } from '../common/agent-config/config-yaml';
import { editYamlSection } from '../common/agent-config/config-yaml-edit';
import { type YamlMap } from '../common/agent-config/config-yaml-parse';

/** Profile names: what a directory under profiles/ may be called (no traversal, no hidden names). */
export const PROFILE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** What a refusal of a name that could not be a profile says. */
export const PROFILE_NAME_RULE = 'profile must be a profile name: letters, digits, "_", "-" and "." (not first), at most 64 characters';

/** A `profile` field or query as checked where it came in (voice.dto.ts): absent, null or empty names none. */
export const profileNamed = (raw: string | null | undefined): string | null => raw || null;

/**
 * Where a voice answer's settings came from (spec 4.5): `?profile=<name>` reads that profile's
 * `config.yaml` under the service home's `profiles/<name>/`, else the global `config.yaml`.
 * `fallback_to_global` says a named profile had no config (or no such profile) so the global one answered.
 */
export type VoiceScope = {
  requestedProfile: string | null;
  scope: 'global' | 'profile';
  fallbackToGlobal: boolean;
  configPath: string | null;
  data: YamlMap;
};

export class VoiceConfigFiles {
  constructor(
    /** The global config (`--config`, RELAY_SVC_CONFIG, default `$SVC_HOME/config.yaml`). */
    private readonly globalPath: string,
    private readonly svcHome: string,
  ) {}

  profilePath(profile: string): string {
    return path.join(this.svcHome, 'profiles', profile, 'config.yaml');
  }

  resolve(profile: string | null): VoiceScope {
    if (profile === null || profile === 'default') {
      const exists = isFile(this.globalPath);
      return {
        requestedProfile: profile,
        scope: profile === 'default' ? 'profile' : 'global',
        fallbackToGlobal: false,
        configPath: exists ? this.globalPath : null,
        data: readYamlMap(this.globalPath),
      };
    }
    const own = this.profilePath(profile);
    if (isFile(own)) return { requestedProfile: profile, scope: 'profile', fallbackToGlobal: false, configPath: own, data: readYamlMap(own) };
    return {
      requestedProfile: profile,
      scope: 'global',
      fallbackToGlobal: true,
      configPath: isFile(this.globalPath) ? this.globalPath : null,
      data: readYamlMap(this.globalPath),
    };
  }

  /**
   * Writes `section` of a profile's config: the keys in `changed` set (null removes one), edited in the
   * file's text in place (config-yaml.ts editYamlSection), so comments, quoting, big integers, tags and
   * every other key stay byte for byte; the previous file kept as `config.yaml.bak`; the new one written
   * atomically with the file's own mode. Returns the path and the SHA-256 of the new content (what the
   * event records). Null when the profile has no config file (the caller then writes relay-owned
   * defaults, as the spec says for an absent profile). Throws ConfigFileError for a config the relay
   * cannot edit in place (too large, not a mapping, a symbolic link, the section not a mapping).
   */
  writeProfileSection(profile: string, section: VoiceSection, changed: Record<string, VoiceSettingValue>): { path: string; sha256: string } | null {
    const file = profile === 'default' ? this.globalPath : this.profilePath(profile);
    if (!isFile(file)) return null;
    const r = rewriteConfigInPlace(file, (text) => editYamlSection(text, section, changed, path.basename(file)).text);
    return { path: file, sha256: r.sha256 };
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
