import type { RelayPluginState } from '@svc/events';
import * as path from 'node:path';
import { ConfigFileError, editYamlLists, readYamlMap, rewriteConfigInPlace, type YamlMap } from '../common/config-yaml';

/** The plugin name a profile's `plugins.enabled` lists for the relay's tools. */
export const RELAY_PLUGIN = 'svc-relay';

/** `enabled` / `disabled` / `absent`: whether the config's `plugins.enabled` or `plugins.disabled` lists the relay. */
export function relayPluginState(configFile: string): RelayPluginState {
  let data: YamlMap;
  try {
    data = readYamlMap(configFile, true);
  } catch {
    return 'absent';
  }
  const plugins = data.plugins;
  if (!isYamlMap(plugins)) return 'absent';
  if (Array.isArray(plugins.enabled) && plugins.enabled.includes(RELAY_PLUGIN)) return 'enabled';
  if (Array.isArray(plugins.disabled) && plugins.disabled.includes(RELAY_PLUGIN)) return 'disabled';
  return 'absent';
}

export class ProfileConfigError extends Error {}

export type EnableResult = {
  profile: string;
  file: string;
  was: RelayPluginState;
  changed: boolean;
  sha256?: string;
  bytes?: number;
  backup?: string;
};

/**
 * Puts the relay in a profile config's `plugins.enabled` (and takes it out of `plugins.disabled`). The
 * config's text is edited in place (config-yaml.ts editYamlLists), so comments, order, quoting, big
 * integers, tags and every other key stay byte for byte; the previous text is kept as `config.yaml.bak`
 * (0600) and the new one written atomically with the file's own mode. A config that already enables the
 * relay is not touched. A config that is not a YAML mapping within the bounds, or whose `plugins` lists
 * are not lists, is refused (ProfileConfigError) rather than rewritten.
 */
export function enableRelayPlugin(profile: string, configFile: string, dryRun: boolean): EnableResult {
  const was = relayPluginState(configFile);
  const base: EnableResult = { profile, file: configFile, was, changed: false };
  if (was === 'enabled') return base;
  const edit = (text: string) =>
    editYamlLists(
      text,
      'plugins',
      { enabled: { add: RELAY_PLUGIN }, disabled: { remove: RELAY_PLUGIN } },
      `${path.basename(configFile)} of ${profile}`,
    ).text;
  try {
    if (dryRun) {
      readYamlMap(configFile, true);
      return { ...base, changed: true };
    }
    const r = rewriteConfigInPlace(configFile, edit);
    return { ...base, changed: r.changed, sha256: r.sha256, bytes: r.bytes, ...(r.backup ? { backup: r.backup } : {}) };
  } catch (err) {
    if (err instanceof ConfigFileError) throw new ProfileConfigError(err.message);
    throw err;
  }
}

/** A YAML mapping (not a list, a scalar or null). */
export function isYamlMap(x: unknown): x is YamlMap {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
