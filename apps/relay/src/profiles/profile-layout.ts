import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROFILE_NAME_RE } from '../voice/voice-config';

/** Profiles the relay looks at, at most (a service home with more is refused beyond this, in name order). */
export const MAX_PROFILES = 200;

/**
 * The reference's name for the default profile (plugin/profiles.py:42-51): the app looks the server default up
 * by it in `/relay/info` (DiagnosticsScreen.kt:210-212), so the phone routes and `/relay/info` answer it as `default`.
 */
export const REFERENCE_DEFAULT_NAME = '(default)';

/** A profile name as asked for, with the reference's `(default)` read as `default`. */
export function canonicalProfileName(name: string): string {
  return name === REFERENCE_DEFAULT_NAME ? 'default' : name;
}

/**
 * The service home's profile layout (the reference's): the `default` profile is the global config
 * (`--config`, RELAY_SVC_CONFIG, default `$SVC_HOME/config.yaml`) with its files beside the service home's
 * root, every other profile a directory `$SVC_HOME/profiles/<name>/` with its own `config.yaml`, `SOUL.md`,
 * `memories/`, `skills/`, `.env` and avatar. Names are checked before they touch a path.
 */
export class ProfileLayout {
  constructor(
    readonly svcHome: string,
    readonly globalConfig: string,
  ) {}

  static validName(name: string): boolean {
    return name === 'default' || PROFILE_NAME_RE.test(name);
  }

  /** The profile's directory, or null when `name` is not a profile here. */
  homeOf(name: string): string | null {
    if (!ProfileLayout.validName(name)) return null;
    const dir = name === 'default' ? this.svcHome : path.join(this.svcHome, 'profiles', name);
    return isDir(dir) ? dir : null;
  }

  configOf(name: string): string {
    return name === 'default' ? this.globalConfig : path.join(this.svcHome, 'profiles', name, 'config.yaml');
  }

  /** Every profile with a config file: `default` first (when the global config exists), then by name. */
  names(): string[] {
    const out: string[] = [];
    if (isFile(this.globalConfig)) out.push('default');
    for (const n of listDirs(path.join(this.svcHome, 'profiles')))
      if (PROFILE_NAME_RE.test(n) && n !== 'default' && isFile(this.configOf(n))) out.push(n);
    return out.slice(0, MAX_PROFILES);
  }
}

const visible = (n: string) => !n.startsWith('.');
export function listDirs(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && visible(e.name))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}
export function listFiles(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && visible(e.name))
      .map((e) => e.name);
  } catch {
    return [];
  }
}
export function isDir(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}
export function isSymlink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
export function isFile(p: string): boolean {
  try {
    return fs.lstatSync(p).isFile();
  } catch {
    return false;
  }
}
