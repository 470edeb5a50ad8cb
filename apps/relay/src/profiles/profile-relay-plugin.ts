import type { RelayPluginState } from '@svc/events';
import * as path from 'node:path';
import { readYamlMap, rewriteConfigInPlace } from '../common/agent-config/config-yaml';
import { editYamlLists } from '../common/agent-config/config-yaml-edit';
import { ConfigFileError, type YamlMap } from '../common/agent-config/config-yaml-parse';

/** The plugin name a profile's `plugins.enabled` lists for the relay's tools, in the spec's spelling. */
export const RELAY_PLUGIN = 'svc-relay';

/**
 * Both names are read always (WIRE.md, "Spelling"): an agent host that runs the public plugin lists
 * `hermes-relay` (its plugin.yaml name), one following the spec `svc-relay`.
 */
const RELAY_PLUGIN_NAMES: readonly string[] = ['svc-relay', 'hermes-relay'];

/** The name the relay writes when it enables itself: the public plugin's under RELAY_CLIENT_SPELLING=hermes. */
export function relayPluginName(spelling: string | undefined): string {
  return spelling === 'hermes' ? 'hermes-relay' : RELAY_PLUGIN;
}

const listsRelay = (list: unknown): boolean => Array.isArray(list) && list.some((x) => RELAY_PLUGIN_NAMES.includes(String(x)));

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
  if (listsRelay(plugins.enabled)) return 'enabled';
  if (listsRelay(plugins.disabled)) return 'disabled';
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
export function enableRelayPlugin(profile: string, configFile: string, dryRun: boolean, name: string = RELAY_PLUGIN): EnableResult {
  const was = relayPluginState(configFile);
  const base: EnableResult = { profile, file: configFile, was, changed: false };
  if (was === 'enabled') return base;
  const edit = (text: string) =>
    editYamlLists(text, 'plugins', { enabled: { add: name }, disabled: { remove: name } }, `${path.basename(configFile)} of ${profile}`).text;
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
