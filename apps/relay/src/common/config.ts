import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { splitCommandLine } from './command-line';
import { BIND_ALL, DEFAULT_DASHBOARD_URL, DEFAULT_PORT, DEFAULT_WEBAPI_URL, dialHost } from './hosts';
import { redactUrl } from './redact-url';
import { isPostgresUrl, redactPgUrl } from '@svc/events';
import { isSpelling, type Spelling } from '@svc/domain';

export type LogLevel = 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';
export const LOG_LEVELS: readonly LogLevel[] = ['DEBUG', 'INFO', 'WARNING', 'ERROR'];

export type RelayConfig = {
  host: string;
  port: number;
  svcHome: string;
  tls: { cert: string; key: string } | null;
  webapiUrl: string;
  /** The global config (`--config`, RELAY_SVC_CONFIG, default `$SVC_HOME/config.yaml`): voice settings and the `default` profile. */
  svcConfigPath: string;
  /** RELAY_AGENT_STATE_DB: the agent's root session store (profiles' in `profiles/<name>/state.db` beside it); null: `state.db` beside svcConfigPath. */
  agentStateDb: string | null;
  /** How long a desktop tool call waits for the client (spec 4.6; the reference's 30 s, computer use 180 s, adb 300 s). */
  desktop: { defaultMs: number; computerUseMs: number; adbMs: number };
  /** Secure Link (spec 4.11): one pinned HTTPS origin for this relay, the API server and the dashboard. */
  secureLink: SecureLinkConfig;
  /** RELAY_PROVIDER_USAGE_ENABLED=1 turns on `/usage/providers` (spec 4.8). */
  providerUsageEnabled: boolean;
  /** RELAY_PROFILE_DISCOVERY=0 offers phones no profiles (the routes of spec 4.7 still answer). */
  profileDiscovery: boolean;
  logLevel: LogLevel;
  terminalShell: string | null;
  /** RELAY_PAIRING_CODE: registered at start (the value itself is never logged). */
  pairingCode: string | null;
  /**
   * RELAY_CLIENT_SPELLING (`svc`, the default, or `hermes`): the brand in the schemes, markers, headers,
   * paths and frame names the relay writes; `hermes` is what the public app and CLI read. Both are read always.
   */
  clientSpelling: Spelling;
  /** RELAY_REFRESH_TTL_DAYS (default 180): how long a paired device may renew its session with its refresh token; 0 turns renewal off. */
  refreshTtlDays: number;
  allowInsecureApiBearer: boolean;
  trustProxyHeaders: boolean;
  apiServer: { enabled: boolean; url: string; key: string | null };
  /** Tunables with safe defaults; tests shrink them. */
  authTimeoutMs: number;
  /** Protocol pings to every phone socket; one missed pong and the socket is dropped as dead. */
  pingIntervalMs: number;
  maxUnauthenticatedSockets: number;
  /** Per address (IPv6 per /64), within maxUnauthenticatedSockets. */
  maxUnauthenticatedPerAddress: number;
  /** RELAY_EVENT_STORE: a postgres:// URL puts the log and its snapshots in that database; null: the file log. */
  eventStoreUrl: string | null;
  segmentBytes: number;
  snapshotEvery: number;
  sweepIntervalMs: number;
  bodyLimitBytes: number;
  /** A request's headers must arrive whole within this (RELAY_HEADERS_TIMEOUT_SECONDS, default 10 s). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (RELAY_REQUEST_TIMEOUT_SECONDS, default 60 s). */
  requestTimeoutMs: number;
  /** Connections of one address (IPv6 per /64) whose first request has not arrived yet. */
  maxSlowConnectionsPerAddress: number;
  /** Phone Threads (spec 2.6): PHONE_ENABLED=1 lets the agent message the phone. */
  phoneEnabled: boolean;
  /** PHONE_HOME_CHANNEL_NAME (default `Phone`); the channel id stays `phone`. */
  phoneHomeChannelName: string;
  /** PHONE_QUEUE_MAX: queued messages kept while no phone is subscribed (oldest dropped first). */
  phoneQueueMax: number;
  /** RELAY_INJECTED_CONTEXT_FILE: the configured blocks of `/context/injected`. */
  injectedContextFile: string;
  /** RELAY_TERMINAL_GRACE_SECONDS: how long a detached shell keeps running (default 600). */
  terminalGraceSeconds: number;
  /** RELAY_TUI_COMMAND: the TUI gateway command line (split like a shell would; no shell runs it). */
  tuiCommand: string | null;
  /** Without RELAY_TUI_COMMAND: where to look for the agent's own TUI gateway (`python -m tui_gateway.entry`). */
  tuiAgent: TuiAgentConfig;
  /** Device Control (bridge): timings and the safety blocklist (WIRE.md defaults). */
  bridge: BridgeConfig;
  /** RELAY_MEDIA_* and SVC_WORKSPACE (spec 4.13). */
  media: MediaConfig;
  /** Relay voice (spec 4.5): provider keys from the environment (or the service's .env), caps and tools. */
  voice: VoiceConfig;
  /** RELAY_REALTIME_VOICE_ENABLED=1: the experimental realtime session on without a settings PATCH. */
  realtimeVoiceEnabled: boolean;
  /** RELAY_UPDATE_FEED_URL: a JSON document `{latest, update_command?}` for `/relay/update-check` (unset: offline, "unknown"). */
  updateFeedUrl: string | null;
  /** RELAY_CONSOLE_DIR: the built console (default: apps/console/dist of this checkout). */
  consoleDir: string | null;
  /** SSE comment line on idle console streams, so proxies and browsers keep them open. */
  consoleHeartbeatMs: number;
  /**
   * The disk guard: below `minFreeBytes` free on the relay home's filesystem (RELAY_DISK_MIN_FREE_MB,
   * default 256; 0 turns it off) the relay takes no new work; free space is read every `checkIntervalMs`.
   */
  disk: { minFreeBytes: number; checkIntervalMs: number };
};

export type MediaConfig = {
  /** RELAY_MEDIA_MAX_SIZE_MB (MiB, fractions allowed) in bytes. */
  maxSizeBytes: number;
  ttlSeconds: number;
  lruCap: number;
  /** Absolute roots from RELAY_MEDIA_ALLOWED_ROOTS (path.delimiter separated). */
  allowedRoots: string[];
  strictSandbox: boolean;
  /** SVC_WORKSPACE, default `<svc_home>/workspace`. */
  workspace: string;
  /** The relay user's home (HOME, else the OS's idea of it): its credential folders are never served. */
  home: string;
  /** The system temp dir (TMPDIR, else the OS's), an allowed root of the strict sandbox. */
  tmpDir: string;
};

export type BridgeConfig = {
  /** RELAY_BRIDGE_COMMAND_TIMEOUT_MS: a silent phone gets 504 after this (real timer). */
  commandTimeoutMs: number;
  /** RELAY_BRIDGE_CONFIRM_TIMEOUT_SECONDS: silence on a destructive-verb confirmation is a denial. */
  confirmTimeoutSeconds: number;
  /** RELAY_BRIDGE_AUTO_DISABLE_MINUTES: used when the phone does not report its own (0: off). */
  autoDisableMinutes: number;
  /** RELAY_BRIDGE_BLOCKLIST (comma-separated, `vendor.*` allowed) extends the default list. */
  blocklist: string[];
  /** RELAY_BRIDGE_DESTRUCTIVE_VERBS (comma-separated) extends the default verbs. */
  extraDestructiveVerbs: string[];
};

const csv = (v: string | undefined): string[] =>
  v
    ? v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : [];

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw new ConfigError(`${name} must be a number from ${min} to ${max}, got "${raw}"`);
  return n;
}

export function loadBridgeConfig(env: NodeJS.ProcessEnv): BridgeConfig {
  return {
    commandTimeoutMs: positiveNumber(env, 'RELAY_BRIDGE_COMMAND_TIMEOUT_MS', 30_000, 100, 600_000),
    confirmTimeoutSeconds: positiveNumber(env, 'RELAY_BRIDGE_CONFIRM_TIMEOUT_SECONDS', 30, 1, 600),
    autoDisableMinutes: positiveNumber(env, 'RELAY_BRIDGE_AUTO_DISABLE_MINUTES', 30, 0, 1440),
    blocklist: csv(env.RELAY_BRIDGE_BLOCKLIST),
    extraDestructiveVerbs: csv(env.RELAY_BRIDGE_DESTRUCTIVE_VERBS).map((v) => v.toLowerCase()),
  };
}

/**
 * The agent's TUI gateway, found the way the agent's own CLI finds it: a checkout holding the
 * `tui_gateway` package, run as `<python> -m tui_gateway.entry` with the checkout on PYTHONPATH.
 */
export type TuiAgentConfig = {
  /** SVC_PYTHON_SRC_ROOT / HERMES_PYTHON_SRC_ROOT, else `<SVC_HOME>/svc-agent` and `~/.hermes/hermes-agent`. */
  roots: string[];
  /** SVC_PYTHON / HERMES_PYTHON / PYTHON; null: the checkout's venv, else `python3` on PATH. */
  python: string | null;
  /** SVC_CWD / HERMES_CWD; null: the checkout. */
  cwd: string | null;
};

function tuiAgentConfig(env: NodeJS.ProcessEnv, svcHome: string): TuiAgentConfig {
  const first = (...names: string[]): string | null => {
    for (const n of names) if (env[n]?.trim()) return env[n]!.trim();
    return null;
  };
  const root = first('SVC_PYTHON_SRC_ROOT', 'HERMES_PYTHON_SRC_ROOT');
  const home = env.HOME?.trim() || os.homedir();
  return {
    roots: root ? [path.resolve(root)] : [path.join(svcHome, 'svc-agent'), path.join(home, '.hermes', 'hermes-agent')],
    python: first('SVC_PYTHON', 'HERMES_PYTHON', 'PYTHON'),
    cwd: first('SVC_CWD', 'HERMES_CWD'),
  };
}

export type SecureLinkConfig = {
  enabled: boolean;
  /** Bind address, and the advertised host unless it binds all (then this machine's LAN address). */
  host: string;
  port: number;
  cert: string | null;
  key: string | null;
  /** Where `/dashboard` goes (loopback http only). */
  dashboardUrl: string;
  /** Reach (experimental): the connector to a broker. The host token comes from the environment only. */
  /** `caFile`: a private CA for the broker's certificate (RELAY_SECURE_LINK_BROKER_CA_FILE); the system's otherwise. */
  reach: { enabled: boolean; brokerUrl: string | null; hostToken: string | null; hostIdFile: string | null; caFile: string | null };
};

function loadSecureLinkConfig(env: NodeJS.ProcessEnv): SecureLinkConfig {
  const port = intInRange(env.RELAY_SECURE_LINK_PORT, 'RELAY_SECURE_LINK_PORT', DEFAULT_PORT.secureLink, 0, 65535);
  return {
    enabled: truthy(env.RELAY_SECURE_LINK_ENABLED),
    host: env.RELAY_SECURE_LINK_HOST?.trim() || BIND_ALL,
    port,
    cert: env.RELAY_SECURE_LINK_CERT?.trim() || null,
    key: env.RELAY_SECURE_LINK_KEY?.trim() || null,
    dashboardUrl: (env.RELAY_SECURE_LINK_DASHBOARD_URL?.trim() || DEFAULT_DASHBOARD_URL).replace(/(?<!\/)\/+$/, ''),
    reach: {
      enabled: truthy(env.RELAY_EXPERIMENTAL_REACH_ENABLED),
      brokerUrl: env.RELAY_SECURE_LINK_BROKER_URL?.trim() || null,
      hostToken: env.RELAY_SECURE_LINK_BROKER_HOST_TOKEN?.trim() || null,
      hostIdFile: env.RELAY_SECURE_LINK_BROKER_HOST_ID_FILE?.trim() || null,
      caFile: env.RELAY_SECURE_LINK_BROKER_CA_FILE?.trim() || null,
    },
  };
}

export type StartFlags = Partial<{
  host: string;
  port: number;
  noSsl: boolean;
  shell: string;
  webapiUrl: string;
  logLevel: string;
  config: string;
  allowInsecureApiKey: boolean;
  clientSpelling: string;
}>;

export class ConfigError extends Error {}

const truthy = (v: string | undefined): boolean => v === '1' || v?.toLowerCase() === 'true' || v?.toLowerCase() === 'yes';

export function svcHomeFrom(env: NodeJS.ProcessEnv): string {
  return path.resolve(env.SVC_HOME || path.join(os.homedir(), '.svc'));
}

/** Spec 4.13: flags win over the environment, which wins over the defaults. */
export function loadConfig(env: NodeJS.ProcessEnv, flags: StartFlags = {}): RelayConfig {
  const svcHome = svcHomeFrom(env);
  const port = flags.port ?? (env.RELAY_PORT ? Number(env.RELAY_PORT) : DEFAULT_PORT.relay);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`RELAY_PORT/--port must be 0-65535, got "${env.RELAY_PORT ?? flags.port}"`);
  const logLevel = (flags.logLevel ?? env.RELAY_LOG_LEVEL ?? 'INFO').toUpperCase();
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) throw new ConfigError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  let tls: RelayConfig['tls'] = null;
  if (!flags.noSsl && (env.RELAY_SSL_CERT || env.RELAY_SSL_KEY)) {
    if (!env.RELAY_SSL_CERT || !env.RELAY_SSL_KEY) throw new ConfigError('TLS needs both RELAY_SSL_CERT and RELAY_SSL_KEY');
    for (const f of [env.RELAY_SSL_CERT, env.RELAY_SSL_KEY]) if (!fs.existsSync(f)) throw new ConfigError(`TLS file not found: ${f}`);
    tls = { cert: env.RELAY_SSL_CERT, key: env.RELAY_SSL_KEY };
  }
  const shell = flags.shell ?? env.RELAY_TERMINAL_SHELL ?? env.SHELL ?? null;
  const apiPort = env.API_SERVER_PORT ?? String(DEFAULT_PORT.apiServer);
  const apiHost = env.API_SERVER_HOST ?? '127.0.0.1';
  return {
    host: flags.host ?? env.RELAY_HOST ?? BIND_ALL,
    port,
    svcHome,
    tls,
    webapiUrl: flags.webapiUrl ?? env.RELAY_WEBAPI_URL ?? DEFAULT_WEBAPI_URL,
    svcConfigPath: path.resolve(flags.config ?? env.RELAY_SVC_CONFIG ?? path.join(svcHome, 'config.yaml')),
    agentStateDb: env.RELAY_AGENT_STATE_DB?.trim() ? path.resolve(env.RELAY_AGENT_STATE_DB.trim()) : null,
    desktop: { defaultMs: 30_000, computerUseMs: 180_000, adbMs: 300_000 },
    providerUsageEnabled: truthy(env.RELAY_PROVIDER_USAGE_ENABLED),
    secureLink: loadSecureLinkConfig(env),
    profileDiscovery: env.RELAY_PROFILE_DISCOVERY === undefined || truthy(env.RELAY_PROFILE_DISCOVERY),
    logLevel: logLevel as LogLevel,
    terminalShell: shell,
    pairingCode: env.RELAY_PAIRING_CODE || null,
    clientSpelling: clientSpelling(flags.clientSpelling ?? env.RELAY_CLIENT_SPELLING),
    refreshTtlDays: intInRange(env.RELAY_REFRESH_TTL_DAYS, 'RELAY_REFRESH_TTL_DAYS', 180, 0, 3650),
    allowInsecureApiBearer: Boolean(flags.allowInsecureApiKey) || truthy(env.RELAY_ALLOW_INSECURE_API_BEARER),
    trustProxyHeaders: truthy(env.RELAY_TRUST_PROXY_HEADERS),
    apiServer: {
      enabled: env.API_SERVER_ENABLED === undefined ? Boolean(env.API_SERVER_KEY) : truthy(env.API_SERVER_ENABLED),
      url: `http://${dialHost(apiHost)}:${apiPort}`,
      key: env.API_SERVER_KEY || null,
    },
    authTimeoutMs: 30_000,
    pingIntervalMs: 30_000,
    maxUnauthenticatedSockets: 64,
    maxUnauthenticatedPerAddress: 8,
    eventStoreUrl: eventStoreUrl(env),
    segmentBytes: 64 * 1024 * 1024,
    snapshotEvery: 50_000,
    sweepIntervalMs: 1_000,
    bodyLimitBytes: 1024 * 1024,
    headersTimeoutMs: intInRange(env.RELAY_HEADERS_TIMEOUT_SECONDS, 'RELAY_HEADERS_TIMEOUT_SECONDS', 10, 1, 120) * 1000,
    requestTimeoutMs: intInRange(env.RELAY_REQUEST_TIMEOUT_SECONDS, 'RELAY_REQUEST_TIMEOUT_SECONDS', 60, 1, 3600) * 1000,
    maxSlowConnectionsPerAddress: 16,
    phoneEnabled: truthy(env.PHONE_ENABLED),
    phoneHomeChannelName: env.PHONE_HOME_CHANNEL_NAME?.trim().slice(0, 64) || 'Phone',
    phoneQueueMax: intInRange(env.PHONE_QUEUE_MAX, 'PHONE_QUEUE_MAX', 500, 1, 100_000),
    injectedContextFile: env.RELAY_INJECTED_CONTEXT_FILE || path.join(svcHome, 'relay', 'injected-context.json'),
    terminalGraceSeconds: intInRange(env.RELAY_TERMINAL_GRACE_SECONDS, 'RELAY_TERMINAL_GRACE_SECONDS', 600, 0, 7 * 86400),
    tuiCommand: env.RELAY_TUI_COMMAND?.trim() || null,
    tuiAgent: tuiAgentConfig(env, svcHome),
    bridge: loadBridgeConfig(env),
    media: loadMediaConfig(env, svcHome),
    voice: loadVoiceConfig(env),
    realtimeVoiceEnabled: truthy(env.RELAY_REALTIME_VOICE_ENABLED),
    updateFeedUrl: updateFeed(env.RELAY_UPDATE_FEED_URL),
    consoleDir: env.RELAY_CONSOLE_DIR ? path.resolve(env.RELAY_CONSOLE_DIR) : null,
    consoleHeartbeatMs: 15_000,
    disk: {
      minFreeBytes: intInRange(env.RELAY_DISK_MIN_FREE_MB, 'RELAY_DISK_MIN_FREE_MB', 256, 0, 1024 * 1024) * 1024 * 1024,
      checkIntervalMs: 5_000,
    },
  };
}

export type VoiceConfig = {
  /** VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY: the OpenAI-compatible provider's key (a secret). */
  openaiKey: string | null;
  /** OPENAI_BASE_URL: the OpenAI-compatible API (default https://api.openai.com/v1). */
  openaiBaseUrl: string;
  /** RELAY_VOICE_MAX_AUDIO_BYTES: the transcription upload cap (default 25 MiB, Whisper's). */
  maxAudioBytes: number;
  /** RELAY_VOICE_TIMEOUT_SECONDS: one provider call (a child process or an HTTP request), default 60. */
  timeoutMs: number;
  /** RELAY_VOICE_OFFLINE_BIN_DIR: where espeak-ng, lame and pocketsphinx_continuous are (default: the PATH). */
  offlineBinDir: string | null;
  /** RELAY_VOICE_SPHINX_MODEL: pocketsphinx's model directory (default Debian's en-us). */
  sphinxModelDir: string;
  /** RELAY_VOICE_STT_MAX_SECONDS: the longest audio offline speech to text decodes (default 120; 413 past it). */
  sttMaxSeconds: number;
  /** RELAY_VOICE_STT_MAX_CONCURRENT: offline transcriptions running at once (default 2, one speech process each). */
  sttMaxConcurrent: number;
  /** RELAY_VOICE_STT_MAX_QUEUE: offline transcriptions waiting for a slot (default 8; 503 `voice.busy` past it). */
  sttMaxQueue: number;
  /** RELAY_VOICE_SESSIONS_PER_MINUTE: output sessions one caller may create a minute (default 60, burst half that; the app makes one a sentence). */
  outputSessionsPerMinute: number;
  /** RELAY_VOICE_REALTIME_SESSIONS_PER_MINUTE: realtime and realtime-agent sessions one caller may create a minute (default 10, burst 5). */
  realtimeSessionsPerMinute: number;
  /** RELAY_VOICE_MAX_OPEN_SESSIONS: voice sessions one caller may hold open at once (default 8). */
  maxOpenSessions: number;
  /** RELAY_VOICE_RESUME_GRACE_SECONDS: how long a voice session whose socket dropped waits for a resume (default 30). */
  resumeGraceSeconds: number;
  /** RELAY_VOICE_REPLAY_MAX_FRAMES: frames a voice session holds for a resume (default 256). */
  replayMaxFrames: number;
  /** RELAY_VOICE_REPLAY_MAX_BYTES: bytes of frames a voice session holds for a resume (default 2 MiB). */
  replayMaxBytes: number;
};

function updateFeed(raw: string | undefined): string | null {
  const v = raw?.trim();
  if (!v) return null;
  if (!/^https?:\/\/[^\s]+$/i.test(v)) throw new ConfigError(`RELAY_UPDATE_FEED_URL must be an http(s) URL, got "${redactUrl(v)}"`);
  return v;
}

function loadVoiceConfig(env: NodeJS.ProcessEnv): VoiceConfig {
  const base = env.OPENAI_BASE_URL?.trim() || 'https://api.openai.com/v1';
  if (!/^https?:\/\/[^\s]+$/i.test(base)) throw new ConfigError(`OPENAI_BASE_URL must be an http(s) URL, got "${base}"`);
  return {
    openaiKey: env.VOICE_TOOLS_OPENAI_KEY?.trim() || env.OPENAI_API_KEY?.trim() || null,
    openaiBaseUrl: base.replace(/(?<!\/)\/+$/, ''),
    maxAudioBytes: intInRange(env.RELAY_VOICE_MAX_AUDIO_BYTES, 'RELAY_VOICE_MAX_AUDIO_BYTES', 25 * 1024 * 1024, 1024, 200 * 1024 * 1024),
    timeoutMs: intInRange(env.RELAY_VOICE_TIMEOUT_SECONDS, 'RELAY_VOICE_TIMEOUT_SECONDS', 60, 1, 600) * 1000,
    offlineBinDir: env.RELAY_VOICE_OFFLINE_BIN_DIR?.trim() || null,
    sphinxModelDir: env.RELAY_VOICE_SPHINX_MODEL?.trim() || '/usr/share/pocketsphinx/model/en-us',
    sttMaxSeconds: intInRange(env.RELAY_VOICE_STT_MAX_SECONDS, 'RELAY_VOICE_STT_MAX_SECONDS', 120, 1, 3600),
    sttMaxConcurrent: intInRange(env.RELAY_VOICE_STT_MAX_CONCURRENT, 'RELAY_VOICE_STT_MAX_CONCURRENT', 2, 1, 64),
    sttMaxQueue: intInRange(env.RELAY_VOICE_STT_MAX_QUEUE, 'RELAY_VOICE_STT_MAX_QUEUE', 8, 0, 1000),
    outputSessionsPerMinute: intInRange(env.RELAY_VOICE_SESSIONS_PER_MINUTE, 'RELAY_VOICE_SESSIONS_PER_MINUTE', 60, 1, 100_000),
    realtimeSessionsPerMinute: intInRange(env.RELAY_VOICE_REALTIME_SESSIONS_PER_MINUTE, 'RELAY_VOICE_REALTIME_SESSIONS_PER_MINUTE', 10, 1, 100_000),
    maxOpenSessions: intInRange(env.RELAY_VOICE_MAX_OPEN_SESSIONS, 'RELAY_VOICE_MAX_OPEN_SESSIONS', 8, 1, 10_000),
    resumeGraceSeconds: intInRange(env.RELAY_VOICE_RESUME_GRACE_SECONDS, 'RELAY_VOICE_RESUME_GRACE_SECONDS', 30, 1, 300),
    replayMaxFrames: intInRange(env.RELAY_VOICE_REPLAY_MAX_FRAMES, 'RELAY_VOICE_REPLAY_MAX_FRAMES', 256, 16, 10_000),
    replayMaxBytes: intInRange(env.RELAY_VOICE_REPLAY_MAX_BYTES, 'RELAY_VOICE_REPLAY_MAX_BYTES', 2 * 1024 * 1024, 64 * 1024, 64 * 1024 * 1024),
  };
}

function loadMediaConfig(env: NodeJS.ProcessEnv, svcHome: string): MediaConfig {
  const num = (name: string, fallback: number, ok: (n: number) => boolean, rule: string): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || !ok(n)) throw new ConfigError(`${name} must be ${rule}, got "${raw}"`);
    return n;
  };
  const maxMb = num('RELAY_MEDIA_MAX_SIZE_MB', 100, (n) => n > 0 && n <= 1024 * 1024, 'a positive number of MiB');
  const roots = (env.RELAY_MEDIA_ALLOWED_ROOTS ?? '')
    .split(path.delimiter)
    .map((r) => r.trim())
    .filter(Boolean);
  for (const r of roots) if (!path.isAbsolute(r)) throw new ConfigError(`RELAY_MEDIA_ALLOWED_ROOTS entries must be absolute paths, got "${r}"`);
  const workspace = env.SVC_WORKSPACE?.trim() || path.join(svcHome, 'workspace');
  if (!path.isAbsolute(workspace)) throw new ConfigError(`SVC_WORKSPACE must be an absolute path, got "${workspace}"`);
  return {
    maxSizeBytes: Math.floor(maxMb * 1024 * 1024),
    ttlSeconds: num('RELAY_MEDIA_TTL_SECONDS', 86_400, (n) => Number.isInteger(n) && n > 0 && n <= 315_360_000, 'a whole number of seconds > 0'),
    lruCap: num('RELAY_MEDIA_LRU_CAP', 500, (n) => Number.isInteger(n) && n > 0 && n <= 1_000_000, 'a whole number > 0'),
    allowedRoots: roots.map((r) => path.resolve(r)),
    strictSandbox: env.RELAY_MEDIA_STRICT_SANDBOX?.trim() === '1',
    workspace: path.resolve(workspace),
    home: path.resolve(env.HOME?.trim() || os.homedir()),
    tmpDir: path.resolve(env.TMPDIR?.trim() || os.tmpdir()),
  };
}

function clientSpelling(raw: string | undefined): Spelling {
  const v = (raw ?? '').trim();
  if (v === '') return 'svc';
  if (isSpelling(v)) return v;
  throw new ConfigError(`RELAY_CLIENT_SPELLING must be "svc" (the spec's names) or "hermes" (what the public app and CLI read), got "${raw}"`);
}

function intInRange(raw: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

/** Checks made when the relay starts (issue 3): the terminal shell resolved, the TUI command splittable. */
export function checkTerminalConfig(config: RelayConfig): RelayConfig {
  if (config.tuiCommand) {
    try {
      if (splitCommandLine(config.tuiCommand).length === 0) throw new Error('it is empty');
    } catch (err) {
      throw new ConfigError(`RELAY_TUI_COMMAND cannot be split into words: ${(err as Error).message}`);
    }
  }
  return { ...config, terminalShell: resolveTerminalShell(config.terminalShell) };
}

/**
 * The terminal shell (`--shell`, RELAY_TERMINAL_SHELL, $SHELL) must be an absolute path to an executable
 * file; checked when the relay starts so a bad value is a clear error, not a phone's failed attach.
 * Without any of them, the login shell of the relay's user, else /bin/sh.
 */
export function resolveTerminalShell(configured: string | null): string {
  if (configured === null || configured.trim() === '') {
    let login: string | null = null;
    try {
      login = os.userInfo().shell;
    } catch {
      login = null;
    }
    for (const candidate of [login, '/bin/sh']) if (candidate && path.isAbsolute(candidate) && isExecutableFile(candidate)) return candidate;
    throw new ConfigError('no terminal shell: set --shell or RELAY_TERMINAL_SHELL to an absolute path of an executable');
  }
  if (!path.isAbsolute(configured)) {
    throw new ConfigError(`terminal shell (--shell / RELAY_TERMINAL_SHELL / $SHELL) must be an absolute path, got "${configured}"`);
  }
  if (!isExecutableFile(configured)) {
    throw new ConfigError(`terminal shell "${configured}" (--shell / RELAY_TERMINAL_SHELL / $SHELL) is not an executable file`);
  }
  return configured;
}

function isExecutableFile(file: string): boolean {
  try {
    const st = fs.statSync(file);
    // access(X_OK) alone would pass any file for root.
    if (!st.isFile() || (st.mode & 0o111) === 0) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function relayDir(config: Pick<RelayConfig, 'svcHome'>): string {
  return path.join(config.svcHome, 'relay');
}

/** RELAY_EVENT_STORE: unset, empty or `file` is the embedded file log; otherwise a postgres:// URL. */
function eventStoreUrl(env: NodeJS.ProcessEnv): string | null {
  const v = env.RELAY_EVENT_STORE?.trim();
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
