import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { RelayPluginState } from '@svc/events';
import { flagValue, numberValue, PORT } from '../common/config/config-env';
import { DEFAULT_PORT, dialAddress, isBindAll, isLoopbackHost, urlHost } from '../common/config/hosts';
import { readYamlMap } from '../common/agent-config/config-yaml';
import { type YamlMap } from '../common/agent-config/config-yaml-parse';
import { findAvatar } from './profile-avatar';
import { dirInside, readInside } from './profile-fs';
import type { ProfileLayout } from './profile-layout';
import { isYamlMap, relayPluginState } from './profile-relay-plugin';

/** What a SOUL.md may contribute to a row (`system_message`) and what GET soul shows at most. */
export const MAX_SOUL_BYTES = 64 * 1024;

/** One profile as phones see it (`auth.ok.profiles[]`, `pairing/profiles.updated`): the app's field names. */
export type ProfileRow = {
  name: string;
  model: string;
  provider: string;
  description: string;
  system_message: string | null;
  gateway_running: boolean;
  has_soul: boolean;
  skill_count: number;
  api_server_enabled: boolean;
  api_server_url: string | null;
  api_server_host: string | null;
  api_server_port: number | null;
  api_server_key_present: boolean;
  is_default: boolean;
  has_avatar: boolean;
};

export type ScannedProfile = { name: string; relay: RelayPluginState; row: ProfileRow | null; sha256: string };

/**
 * Reads one profile into its row: model and provider from `model:`, the description from the config or
 * the SOUL's first line, the SOUL (capped) as the system message, the profile API server's address from
 * `platforms.api_server` / `api_server` / the profile's `.env` (only whether a key is set, never the key),
 * and whether its gateway runs (its `gateway.pid` names a live process, or its API port accepts a
 * connection within 250 ms). Null when the config cannot be read as a mapping.
 */
export async function readProfileRow(layout: ProfileLayout, name: string, apiBaseUrl: string | null): Promise<ProfileRow | null> {
  const home = layout.homeOf(name);
  if (!home) return null;
  let data: YamlMap;
  try {
    data = readYamlMap(layout.configOf(name), true);
  } catch {
    return null;
  }
  const modelSection = data.model;
  const model =
    typeof modelSection === 'string'
      ? modelSection
      : isYamlMap(modelSection) && typeof modelSection.default === 'string' && modelSection.default
        ? modelSection.default
        : 'unknown';
  const provider = isYamlMap(modelSection) && typeof modelSection.provider === 'string' ? modelSection.provider : '';
  const soulRead = readInside(home, ['SOUL.md'], MAX_SOUL_BYTES);
  const soul = soulRead.state === 'ok' ? soulRead.text.trimEnd() : null;
  const described = typeof data.description === 'string' ? data.description.trim() : '';
  const api = apiServerOf(data, home, apiBaseUrl);
  return {
    name,
    model: model.slice(0, 256),
    provider: provider.slice(0, 128),
    description: (described || (soul ? firstLine(soul) : '')).slice(0, 500),
    system_message: soul ? soul : null,
    // Probed where the host reaches it (its own host and port), not at the address phones are given.
    gateway_running: gatewayPidAlive(home) || (api.api_server_enabled && (await portOpen(api.api_server_host!, api.api_server_port!))),
    has_soul: soul !== null,
    skill_count: countSkills(home),
    ...api,
    is_default: name === 'default',
    has_avatar: findAvatar(home) !== null,
  };
}

/**
 * Every profile: its relay-plugin state, its row (null when its config is unreadable) and the row's
 * digest. One profile's files are read per turn of the event loop (a config is parsed at most once per
 * version of the file, config-yaml.ts), so a rescan of many large configs never holds the loop for long;
 * the gateway probes of all of them run together.
 */
export async function scanProfiles(layout: ProfileLayout, apiBaseUrl: string | null): Promise<ScannedProfile[]> {
  const scans: Array<Promise<ScannedProfile>> = [];
  for (const name of layout.names()) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    scans.push(
      readProfileRow(layout, name, apiBaseUrl).then((row) => ({
        name,
        relay: relayPluginState(layout.configOf(name)),
        row,
        sha256: createHash('sha256')
          .update(JSON.stringify(row ?? { unreadable: name }))
          .digest('hex'),
      })),
    );
  }
  return Promise.all(scans);
}

function apiServerOf(data: YamlMap, home: string, apiBaseUrl: string | null) {
  const platform: YamlMap = {};
  const platforms = data.platforms;
  if (isYamlMap(platforms)) {
    const c = isYamlMap(platforms.api_server) ? platforms.api_server : isYamlMap(platforms['api-server']) ? platforms['api-server'] : null;
    if (c) Object.assign(platform, c);
  }
  if (isYamlMap(data.api_server)) Object.assign(platform, data.api_server);
  if (isYamlMap(platform.extra)) Object.assign(platform, platform.extra);
  const env = dotenvOf(home);
  const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' ? String(v) : null);
  // The relay's own rules for a flag and a port (config-env.ts); a value they do not read is left to the next source.
  const int = (v: unknown) => numberValue(v, { ...PORT, min: 1 });
  const host = str(platform.host) ?? str(env.API_SERVER_HOST) ?? '127.0.0.1';
  const port = int(platform.port) ?? int(env.API_SERVER_PORT) ?? DEFAULT_PORT.apiServer;
  const keyPresent = Boolean(str(platform.key) ?? str(env.API_SERVER_KEY));
  const enabled = flagValue(platform.enabled ?? env.API_SERVER_ENABLED) ?? keyPresent;
  let url: string | null = null;
  if (enabled) {
    let scheme = 'http';
    let routeHost = host;
    if (apiBaseUrl && (isBindAll(host) || isLoopbackHost(host))) {
      try {
        const u = new URL(apiBaseUrl);
        scheme = u.protocol.replace(':', '') || scheme;
        routeHost = u.hostname.replace(/^\[|\]$/g, '') || routeHost;
      } catch {
        /* keep the profile's own host */
      }
    }
    url = `${scheme}://${urlHost(routeHost)}:${port}`;
  }
  return {
    api_server_enabled: enabled,
    api_server_url: url,
    api_server_host: enabled ? host : null,
    api_server_port: enabled ? port : null,
    api_server_key_present: keyPresent,
  };
}

/** `KEY=value` lines of a profile's `.env` (16 KiB at most; quotes stripped; never through a link). */
function dotenvOf(home: string): Record<string, string> {
  const read = readInside(home, ['.env'], 16 * 1024);
  if (read.state !== 'ok') return {};
  const out: Record<string, string> = {};
  for (const raw of read.text.split(/\r?\n/)) {
    // eslint-disable-next-line regexp/no-super-linear-backtracking -- the operator's own .env, read 16 KiB at most
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(raw);
    if (m) out[m[1]] = m[2].trim().replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}

/** `gateway.pid` (JSON `{pid, ...}` or a bare number) naming a live process whose command line looks like a gateway. */
function gatewayPidAlive(home: string): boolean {
  const read = readInside(home, ['gateway.pid'], 4096);
  if (read.state !== 'ok') return false;
  const raw = read.text.trim();
  let pid: number;
  try {
    const parsed: unknown = JSON.parse(raw);
    pid = typeof parsed === 'number' ? parsed : isYamlMap(parsed) && typeof parsed.pid === 'number' ? parsed.pid : NaN;
  } catch {
    pid = NaN;
  }
  if (!Number.isInteger(pid) || pid <= 1) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').toLowerCase();
    return /gateway|svc|hermes|agent/.test(cmd);
  } catch {
    return process.platform !== 'linux';
  }
}

function portOpen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: dialAddress(host), port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(250, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** SKILL.md files under the profile's `skills/`, at most 4 levels down and 2,000 entries looked at; no link followed. */
function countSkills(home: string): number {
  let n = 0;
  let seen = 0;
  const walk = (dir: string, depth: number) => {
    if (depth > 4 || seen > 2000) return;
    const st = (() => {
      try {
        return fs.lstatSync(dir);
      } catch {
        return null;
      }
    })();
    if (!st || !st.isDirectory()) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      seen++;
      if (e.isFile() && e.name === 'SKILL.md') n++;
      else if (e.isDirectory() && !e.name.startsWith('.')) walk(path.join(dir, e.name), depth + 1);
    }
  };
  if (dirInside(home, ['skills']) === 'dir') walk(path.join(home, 'skills'), 0);
  return n;
}

function firstLine(text: string): string {
  for (const raw of text.split(/\r?\n/)) {
    const l = raw.trim().replace(/^#+/, '').trim();
    if (l) return l;
  }
  return '';
}
