import type { VoiceSection, VoiceSettingValue } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as Yaml from 'yaml';
import { jsonDepthExceeds } from '@svc/events';
import { atomicWrite } from '../common/atomic-write';

/** `yaml` (72 modules) is loaded by the first voice call that reads a config, not at the relay's start. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = (): typeof Yaml => require('yaml') as typeof Yaml;

/** A config file past this is not read (a voice section is a few hundred bytes). */
const MAX_CONFIG_BYTES = 1024 * 1024;
/** Profile names: what a directory under profiles/ may be called (no traversal, no hidden names). */
export const PROFILE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export type YamlMap = Record<string, unknown>;

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

  /** `null` for no profile; throws for a name that could not be a profile (400 upstream). */
  static checkProfile(raw: unknown): string | null {
    if (raw === undefined || raw === null || raw === '') return null;
    if (typeof raw !== 'string' || !PROFILE_NAME_RE.test(raw)) throw new ProfileNameError();
    return raw;
  }

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
   * Writes `section` of a profile's config (merged over what is there) atomically: a temp file in the same
   * directory, fsync, rename, fsync of the directory. Other sections and unknown keys are kept. Returns the
   * path and the SHA-256 of the new content (what the event records). Null when the profile has no config file
   * (the caller then writes relay-owned defaults, as the spec says for an absent profile).
   */
  writeProfileSection(profile: string, section: VoiceSection, changed: Record<string, VoiceSettingValue>): { path: string; sha256: string } | null {
    const file = profile === 'default' ? this.globalPath : this.profilePath(profile);
    if (!isFile(file)) return null;
    const data = readYamlMap(file, true);
    const current = data[section];
    const next: YamlMap = { ...(isMap(current) ? current : {}) };
    for (const [k, v] of Object.entries(changed)) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
    data[section] = next;
    const written = atomicWrite(file, yaml().stringify(data));
    return { path: file, sha256: written.sha256 };
  }
}

export class ProfileNameError extends Error {
  constructor() {
    super('profile must be a profile name: letters, digits, "_", "-" and "." (not first), at most 64 characters');
  }
}

export class ConfigFileError extends Error {}

const isMap = (v: unknown): v is YamlMap => typeof v === 'object' && v !== null && !Array.isArray(v);

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * A YAML mapping, or `{}` for a missing, unreadable or non-mapping file (a read answers from defaults).
 * With `strict` (before a write) anything but a readable mapping throws: a write must never replace a
 * file it could not understand.
 */
export function readYamlMap(file: string, strict = false): YamlMap {
  let text: string;
  try {
    const st = fs.statSync(file);
    if (st.size > MAX_CONFIG_BYTES) {
      if (strict) throw new ConfigFileError(`${path.basename(file)} is larger than ${MAX_CONFIG_BYTES} bytes`);
      return {};
    }
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof ConfigFileError) throw err;
    if (strict) throw new ConfigFileError(`${path.basename(file)} could not be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    return {};
  }
  try {
    if (jsonDepthExceeds(text)) throw new Error('nested too deeply');
    const doc: unknown = yaml().parse(text, { maxAliasCount: 100 });
    if (doc === null || doc === undefined) return {};
    if (!isMap(doc)) throw new Error('not a mapping');
    return doc;
  } catch (err) {
    if (strict)
      throw new ConfigFileError(
        `${path.basename(file)} is not a YAML mapping the relay can rewrite (${(err as Error).message}); fix it by hand first`,
      );
    return {};
  }
}

/** A section's settings with the selected provider's own block merged in (`tts: {provider: openai, openai: {voice: ...}}`). */
export function selectedProviderConfig(data: YamlMap, section: string): YamlMap {
  const s = data[section];
  if (!isMap(s)) return {};
  const provider = typeof s.provider === 'string' && s.provider.trim() !== '' ? s.provider.trim() : null;
  const selected = provider ? s[provider] : undefined;
  const out: YamlMap = isMap(selected) ? { ...selected } : {};
  for (const [k, v] of Object.entries(s)) {
    if (k === provider || isMap(v)) continue;
    if (v !== null && v !== '') out[k] = v;
  }
  if (provider) out.provider = provider;
  return out;
}

export const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
export const int = (v: unknown): number | null =>
  typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null;
export const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
