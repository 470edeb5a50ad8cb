import { DEFAULT_TRAILS, EVIDENCE_MODES, isSpelling, MAX_TRAILS, type EvidenceMode, type Spelling } from '@svc/domain';
import { isPostgresUrl, redactPgUrl } from '@svc/events';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError, envFlag, envList, envNumber, envText, PORT } from './config-env';
import { BIND_ALL, DEFAULT_DASHBOARD_URL, DEFAULT_PORT } from './hosts';
import { redactUrl } from '../redact-url';
import { MAX_PHONE_SIDE, MIN_MAX_SIDE } from '../../mcp/screen-image';
import { MAX_PHONE_NODES } from '../../mcp/element-tree';
import { WAIT_CEILING_MS } from '../../mcp/element-limits';
import {
  LOOPBACK_TRUST,
  type BridgeConfig,
  type LoopbackTrust,
  type MediaConfig,
  type ProfileFilesConfig,
  type SecureLinkConfig,
  type SocketConfig,
  type TerminalRecordingConfig,
  type TuiAgentConfig,
  type VoiceConfig,
} from './relay-config';
/** Each feature's settings from the environment (config.ts puts them together). */

export function loadBridgeConfig(env: NodeJS.ProcessEnv): BridgeConfig {
  return {
    commandTimeoutMs: envNumber(env, 'RELAY_BRIDGE_COMMAND_TIMEOUT_MS', { default: 30_000, min: 100, max: 600_000 }),
    confirmTimeoutSeconds: envNumber(env, 'RELAY_BRIDGE_CONFIRM_TIMEOUT_SECONDS', { default: 30, min: 1, max: 600 }),
    autoDisableMinutes: envNumber(env, 'RELAY_BRIDGE_AUTO_DISABLE_MINUTES', { default: 30, min: 0, max: 1440 }),
    blocklist: envList(env, 'RELAY_BRIDGE_BLOCKLIST'),
    extraDestructiveVerbs: envList(env, 'RELAY_BRIDGE_DESTRUCTIVE_VERBS').map((v) => v.toLowerCase()),
    mcpSessions: {
      perDevice: envNumber(env, 'RELAY_MCP_SESSIONS_PER_DEVICE', { default: 4, min: 1, max: 64, integer: true }),
      total: envNumber(env, 'RELAY_MCP_MAX_SESSIONS', { default: 64, min: 1, max: 4096, integer: true }),
      idleMs: envNumber(env, 'RELAY_MCP_IDLE_MINUTES', { default: 60, min: 1, max: 7 * 24 * 60, integer: true }) * 60_000,
    },
    mcpScreenshotMaxSide: envNumber(env, 'RELAY_MCP_SCREENSHOT_MAX_SIDE', { default: 2000, min: MIN_MAX_SIDE, max: MAX_PHONE_SIDE, integer: true }),
    evidence: evidenceMode(env),
    mcpTrails: envNumber(env, 'RELAY_MCP_TRAILS', { default: DEFAULT_TRAILS, min: 1, max: MAX_TRAILS, integer: true }),
    mcpElements: {
      maxElements: envNumber(env, 'RELAY_MCP_TREE_MAX_ELEMENTS', { default: 300, min: 10, max: MAX_PHONE_NODES, integer: true }),
      maxText: envNumber(env, 'RELAY_MCP_TREE_MAX_TEXT', { default: 200, min: 20, max: 2000, integer: true }),
      waitMaxMs: envNumber(env, 'RELAY_MCP_WAIT_MAX_MS', { default: 60_000, min: 100, max: WAIT_CEILING_MS, integer: true }),
      waitMaxPolls: envNumber(env, 'RELAY_MCP_WAIT_MAX_POLLS', { default: 120, min: 1, max: 10_000, integer: true }),
    },
    mcpSecretsMax: envNumber(env, 'RELAY_MCP_SECRETS_MAX', { default: 32, min: 1, max: 1000, integer: true }),
  };
}

function evidenceMode(env: NodeJS.ProcessEnv): EvidenceMode {
  const raw = envText(env, 'RELAY_BRIDGE_EVIDENCE')?.toLowerCase() ?? 'mcp';
  if (!(EVIDENCE_MODES as readonly string[]).includes(raw))
    throw new ConfigError(`RELAY_BRIDGE_EVIDENCE must be one of ${EVIDENCE_MODES.join(', ')}, got "${env.RELAY_BRIDGE_EVIDENCE}"`);
  return raw as EvidenceMode;
}

/**
 * The socket bounds (issue 34). The buffer holds the largest frame the relay queues for a client (a desktop
 * tool call's 8 MiB of arguments) with room behind it; terminal output (1 MiB) and voice audio (512 KiB)
 * pause their producers far below it. The rate is about seven times the phone app's busiest sustained
 * sending (typing into a terminal, one frame a key), the burst 30 times its reconnect (up to 50 buffered
 * notifications) and six minutes of buffered speech on a voice socket (6,400-byte chunks sent at once).
 */
export function loadSocketConfig(env: NodeJS.ProcessEnv): SocketConfig {
  return {
    bufferBytes: Math.round(envNumber(env, 'RELAY_SOCKET_BUFFER_MB', { default: 8, min: 0, above: true, max: 1024 }) * 1024 * 1024),
    queuedFrames: envNumber(env, 'RELAY_SOCKET_QUEUED_FRAMES', { default: 64, min: 1, max: 100_000, integer: true }),
    framesPerSecond: envNumber(env, 'RELAY_SOCKET_FRAMES_PER_SECOND', { default: 200, min: 1, max: 1_000_000, integer: true }),
    frameBurst: envNumber(env, 'RELAY_SOCKET_FRAME_BURST', { default: 2000, min: 1, max: 10_000_000, integer: true }),
  };
}

/**
 * Profile files (issue 35): the app lets a user edit whatever it was served and saves it without If-Match,
 * so a file is served whole up to its write cap. The defaults take what the app and the reference write
 * (1 MiB, RelayProfileInspectorClient.kt:66, plugin/relay/server.py:3318) and read more than the reference
 * serves (200 KiB SOUL, 50 KiB memory, server.py:3102-3104); lower caps are allowed, since a save of a file
 * served cut is refused anyway. The ceilings keep one answer in memory.
 */
export function loadProfileFilesConfig(env: NodeJS.ProcessEnv): ProfileFilesConfig {
  const bytes = (name: string, fallback: number, min: number, max: number) => envNumber(env, name, { default: fallback, min, max, integer: true });
  return {
    soulMaxBytes: bytes('RELAY_PROFILE_SOUL_MAX_BYTES', 1024 * 1024, 4 * 1024, 16 * 1024 * 1024),
    memoryMaxBytes: bytes('RELAY_PROFILE_MEMORY_MAX_BYTES', 1024 * 1024, 4 * 1024, 16 * 1024 * 1024),
    memoryListMaxBytes: bytes('RELAY_PROFILE_MEMORY_LIST_MAX_BYTES', 8 * 1024 * 1024, 4 * 1024, 256 * 1024 * 1024),
  };
}

export function loadTerminalRecordingConfig(env: NodeJS.ProcessEnv): TerminalRecordingConfig {
  const mb = (name: string, fallback: number) => envNumber(env, name, { default: fallback, min: 1, max: 1024 * 1024, integer: true }) * 1024 * 1024;
  return {
    enabled: envFlag(env, 'RELAY_TERMINAL_RECORDING', false),
    input: envFlag(env, 'RELAY_TERMINAL_RECORDING_INPUT', false),
    maxBytes: mb('RELAY_TERMINAL_RECORDING_MAX_MB', 64),
    totalBytes: mb('RELAY_TERMINAL_RECORDINGS_TOTAL_MB', 1024),
  };
}

export function loadTuiAgentConfig(env: NodeJS.ProcessEnv, svcHome: string): TuiAgentConfig {
  const first = (...names: string[]): string | null => {
    for (const n of names) if (envText(env, n)) return envText(env, n);
    return null;
  };
  const root = first('SVC_PYTHON_SRC_ROOT', 'HERMES_PYTHON_SRC_ROOT');
  const home = envText(env, 'HOME') ?? os.homedir();
  return {
    roots: root ? [path.resolve(root)] : [path.join(svcHome, 'svc-agent'), path.join(home, '.hermes', 'hermes-agent')],
    python: first('SVC_PYTHON', 'HERMES_PYTHON', 'PYTHON'),
    cwd: first('SVC_CWD', 'HERMES_CWD'),
  };
}

export function loadSecureLinkConfig(env: NodeJS.ProcessEnv): SecureLinkConfig {
  return {
    enabled: envFlag(env, 'RELAY_SECURE_LINK_ENABLED', false),
    host: envText(env, 'RELAY_SECURE_LINK_HOST') ?? BIND_ALL,
    port: envNumber(env, 'RELAY_SECURE_LINK_PORT', { ...PORT, default: DEFAULT_PORT.secureLink }),
    cert: envText(env, 'RELAY_SECURE_LINK_CERT'),
    key: envText(env, 'RELAY_SECURE_LINK_KEY'),
    dashboardUrl: (envText(env, 'RELAY_SECURE_LINK_DASHBOARD_URL') ?? DEFAULT_DASHBOARD_URL).replace(/(?<!\/)\/+$/, ''),
    reach: {
      enabled: envFlag(env, 'RELAY_EXPERIMENTAL_REACH_ENABLED', false),
      brokerUrl: envText(env, 'RELAY_SECURE_LINK_BROKER_URL'),
      hostToken: envText(env, 'RELAY_SECURE_LINK_BROKER_HOST_TOKEN'),
      hostIdFile: envText(env, 'RELAY_SECURE_LINK_BROKER_HOST_ID_FILE'),
      caFile: envText(env, 'RELAY_SECURE_LINK_BROKER_CA_FILE'),
    },
  };
}

export function loadVoiceConfig(env: NodeJS.ProcessEnv): VoiceConfig {
  const base = envText(env, 'OPENAI_BASE_URL') ?? 'https://api.openai.com/v1';
  if (!/^https?:\/\/[^\s]+$/i.test(base)) throw new ConfigError(`OPENAI_BASE_URL must be an http(s) URL, got "${base}"`);
  const whole = (name: string, fallback: number, min: number, max: number) => envNumber(env, name, { default: fallback, min, max, integer: true });
  return {
    openaiKey: envText(env, 'VOICE_TOOLS_OPENAI_KEY') ?? envText(env, 'OPENAI_API_KEY'),
    openaiBaseUrl: base.replace(/(?<!\/)\/+$/, ''),
    maxAudioBytes: whole('RELAY_VOICE_MAX_AUDIO_BYTES', 25 * 1024 * 1024, 1024, 200 * 1024 * 1024),
    timeoutMs: whole('RELAY_VOICE_TIMEOUT_SECONDS', 60, 1, 600) * 1000,
    offlineBinDir: envText(env, 'RELAY_VOICE_OFFLINE_BIN_DIR'),
    sphinxModelDir: envText(env, 'RELAY_VOICE_SPHINX_MODEL') ?? '/usr/share/pocketsphinx/model/en-us',
    sttMaxSeconds: whole('RELAY_VOICE_STT_MAX_SECONDS', 120, 1, 3600),
    sttMaxConcurrent: whole('RELAY_VOICE_STT_MAX_CONCURRENT', 2, 1, 64),
    sttMaxQueue: whole('RELAY_VOICE_STT_MAX_QUEUE', 8, 0, 1000),
    outputSessionsPerMinute: whole('RELAY_VOICE_SESSIONS_PER_MINUTE', 60, 1, 100_000),
    realtimeSessionsPerMinute: whole('RELAY_VOICE_REALTIME_SESSIONS_PER_MINUTE', 10, 1, 100_000),
    maxOpenSessions: whole('RELAY_VOICE_MAX_OPEN_SESSIONS', 8, 1, 10_000),
    resumeGraceSeconds: whole('RELAY_VOICE_RESUME_GRACE_SECONDS', 300, 1, 3600),
    replayMaxFrames: whole('RELAY_VOICE_REPLAY_MAX_FRAMES', 256, 16, 10_000),
    replayMaxBytes: whole('RELAY_VOICE_REPLAY_MAX_BYTES', 2 * 1024 * 1024, 64 * 1024, 64 * 1024 * 1024),
    heldMaxBytes: whole('RELAY_VOICE_HELD_MAX_BYTES', 32 * 1024 * 1024, 64 * 1024, 4 * 1024 * 1024 * 1024),
  };
}

export function loadMediaConfig(env: NodeJS.ProcessEnv, svcHome: string): MediaConfig {
  const maxMb = envNumber(env, 'RELAY_MEDIA_MAX_SIZE_MB', { default: 100, min: 0, above: true, max: 1024 * 1024 });
  const roots = (env.RELAY_MEDIA_ALLOWED_ROOTS ?? '')
    .split(path.delimiter)
    .map((r) => r.trim())
    .filter(Boolean);
  for (const r of roots) if (!path.isAbsolute(r)) throw new ConfigError(`RELAY_MEDIA_ALLOWED_ROOTS entries must be absolute paths, got "${r}"`);
  const workspace = envText(env, 'SVC_WORKSPACE') ?? path.join(svcHome, 'workspace');
  if (!path.isAbsolute(workspace)) throw new ConfigError(`SVC_WORKSPACE must be an absolute path, got "${workspace}"`);
  return {
    maxSizeBytes: Math.floor(maxMb * 1024 * 1024),
    ttlSeconds: envNumber(env, 'RELAY_MEDIA_TTL_SECONDS', { default: 86_400, min: 1, max: 315_360_000, integer: true }),
    lruCap: envNumber(env, 'RELAY_MEDIA_LRU_CAP', { default: 500, min: 1, max: 1_000_000, integer: true }),
    allowedRoots: roots.map((r) => path.resolve(r)),
    strictSandbox: envFlag(env, 'RELAY_MEDIA_STRICT_SANDBOX', false),
    workspace: path.resolve(workspace),
    home: path.resolve(envText(env, 'HOME') ?? os.homedir()),
    tmpDir: path.resolve(envText(env, 'TMPDIR') ?? os.tmpdir()),
  };
}

export function updateFeedUrl(env: NodeJS.ProcessEnv): string | null {
  const v = envText(env, 'RELAY_UPDATE_FEED_URL');
  if (!v) return null;
  if (!/^https?:\/\/[^\s]+$/i.test(v)) throw new ConfigError(`RELAY_UPDATE_FEED_URL must be an http(s) URL, got "${redactUrl(v)}"`);
  return v;
}

/** RELAY_LOOPBACK_TRUST: `loopback` (the default) or `key` (relay-config.ts). */
export function loopbackTrust(raw: string | undefined): LoopbackTrust {
  const v = (raw ?? '').trim().toLowerCase();
  if (v === '') return 'loopback';
  if ((LOOPBACK_TRUST as readonly string[]).includes(v)) return v as LoopbackTrust;
  throw new ConfigError(
    `RELAY_LOOPBACK_TRUST must be "loopback" (the host tools' platform routes answer any loopback caller) or "key" (they need the operator key or a paired bearer too), got "${raw}"`,
  );
}

export function clientSpelling(raw: string | undefined): Spelling {
  const v = (raw ?? '').trim();
  if (v === '') return 'svc';
  if (isSpelling(v)) return v;
  throw new ConfigError(`RELAY_CLIENT_SPELLING must be "svc" (the spec's names) or "hermes" (what the public app and CLI read), got "${raw}"`);
}

/** RELAY_ROLE (`leader`, the default, or `standby`) or `--standby`: true for a standby, which needs a PostgreSQL store. */
export function relayRole(raw: string | undefined, flag: boolean, postgres: boolean): boolean {
  const v = (raw ?? '').trim().toLowerCase();
  if (v !== '' && v !== 'leader' && v !== 'standby')
    throw new ConfigError(`RELAY_ROLE must be "leader" or "standby", got "${(raw ?? '').slice(0, 40)}"`);
  const standby = flag || v === 'standby';
  if (standby && !postgres)
    throw new ConfigError(
      'a standby (--standby or RELAY_ROLE=standby) follows a log in PostgreSQL: set RELAY_EVENT_STORE=postgres://... (the same database as the leader)',
    );
  return standby;
}

/** RELAY_EVENT_STORE: unset, empty or `file` is the embedded file log; otherwise a postgres:// URL. */
export function eventStoreUrl(env: NodeJS.ProcessEnv): string | null {
  const v = envText(env, 'RELAY_EVENT_STORE');
  if (!v || v.toLowerCase() === 'file') return null;
  if (!isPostgresUrl(v)) {
    throw new ConfigError('RELAY_EVENT_STORE must be a postgres:// (or postgresql://) URL, or unset for the file log under SVC_HOME');
  }
  try {
    new URL(v);
  } catch {
    throw new ConfigError(`RELAY_EVENT_STORE is not a URL (${redactPgUrl(v)})`);
  }
  return v;
}

/**
 * RELAY_WITNESS_URLS: `<witness name>=<submission prefix>` entries separated by spaces or commas (C2SP
 * tlog-witness), each name that of a key in RELAY_WITNESS_VKEYS (`<name>+<hash>+<key>`), which checks the
 * cosignatures the witness answers. Checked here so a mistake stops the start with what is wrong.
 */
export function loadWitnessUrls(env: NodeJS.ProcessEnv): Array<{ name: string; url: string }> {
  const names = (env.RELAY_WITNESS_VKEYS ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((k) => k.split('+')[0]);
  const out: Array<{ name: string; url: string }> = [];
  for (const entry of (env.RELAY_WITNESS_URLS ?? '').split(/[\s,]+/).filter(Boolean)) {
    const at = entry.search(/=https?:\/\//);
    if (at <= 0) throw new ConfigError(`RELAY_WITNESS_URLS: "${entry.slice(0, 80)}" is not <witness name>=<http(s) URL>`);
    const name = entry.slice(0, at);
    let url = entry.slice(at + 1);
    if (!URL.canParse(url)) throw new ConfigError(`RELAY_WITNESS_URLS: ${name}: "${url.slice(0, 80)}" is not a URL`);
    while (url.endsWith('/')) url = url.slice(0, -1);
    if (!names.includes(name)) throw new ConfigError(`RELAY_WITNESS_URLS: ${name} has no verifier key in RELAY_WITNESS_VKEYS`);
    if (out.some((t) => t.name === name)) throw new ConfigError(`RELAY_WITNESS_URLS: ${name} is listed twice`);
    out.push({ name, url });
  }
  return out;
}
