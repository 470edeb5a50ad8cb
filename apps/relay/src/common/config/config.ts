import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { splitCommandLine } from '../command-line';
import { ConfigError, envFlag, envNumber, envText, PORT } from './config-env';
import {
  clientSpelling,
  eventStoreUrl,
  relayRole,
  loadBridgeConfig,
  loadMediaConfig,
  loadProfileFilesConfig,
  loadSecureLinkConfig,
  loadSocketConfig,
  loadTerminalRecordingConfig,
  loadTuiAgentConfig,
  loadVoiceConfig,
  loopbackTrust,
  updateFeedUrl,
  loadWitnessUrls,
} from './config-loaders';
import { BIND_ALL, DEFAULT_PORT, DEFAULT_WEBAPI_URL, dialHost } from './hosts';
import { LOG_LEVELS, type LogLevel, type RelayConfig, type StartFlags } from './relay-config';

export function svcHomeFrom(env: NodeJS.ProcessEnv): string {
  return path.resolve(env.SVC_HOME || path.join(os.homedir(), '.svc'));
}

/** Spec 4.13: flags win over the environment, which wins over the defaults. */
export function loadConfig(env: NodeJS.ProcessEnv, flags: StartFlags = {}): RelayConfig {
  const svcHome = svcHomeFrom(env);
  const port = flags.port ?? envNumber(env, 'RELAY_PORT', { ...PORT, default: DEFAULT_PORT.relay, label: 'RELAY_PORT/--port' });
  if (!Number.isInteger(port) || port < PORT.min || port > PORT.max) throw new ConfigError(`RELAY_PORT/--port must be 0-65535, got "${port}"`);
  const logLevel = (flags.logLevel ?? env.RELAY_LOG_LEVEL ?? 'INFO').toUpperCase();
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    const from = flags.logLevel !== undefined ? '--log-level' : 'RELAY_LOG_LEVEL';
    throw new ConfigError(`${from} must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  let tls: RelayConfig['tls'] = null;
  if (!flags.noSsl && (env.RELAY_SSL_CERT || env.RELAY_SSL_KEY)) {
    if (!env.RELAY_SSL_CERT || !env.RELAY_SSL_KEY) throw new ConfigError('TLS needs both RELAY_SSL_CERT and RELAY_SSL_KEY');
    for (const f of [env.RELAY_SSL_CERT, env.RELAY_SSL_KEY]) if (!fs.existsSync(f)) throw new ConfigError(`TLS file not found: ${f}`);
    tls = { cert: env.RELAY_SSL_CERT, key: env.RELAY_SSL_KEY };
  }
  const shell = flags.shell ?? env.RELAY_TERMINAL_SHELL ?? env.SHELL ?? null;
  const apiPort = envNumber(env, 'API_SERVER_PORT', { ...PORT, min: 1, default: DEFAULT_PORT.apiServer });
  const apiHost = env.API_SERVER_HOST ?? '127.0.0.1';
  const whole = (name: string, fallback: number, min: number, max: number) => envNumber(env, name, { default: fallback, min, max, integer: true });
  return {
    host: flags.host ?? env.RELAY_HOST ?? BIND_ALL,
    port,
    svcHome,
    tls,
    webapiUrl: flags.webapiUrl ?? env.RELAY_WEBAPI_URL ?? DEFAULT_WEBAPI_URL,
    svcConfigPath: path.resolve(flags.config ?? env.RELAY_SVC_CONFIG ?? path.join(svcHome, 'config.yaml')),
    agentStateDb: envText(env, 'RELAY_AGENT_STATE_DB') === null ? null : path.resolve(envText(env, 'RELAY_AGENT_STATE_DB')!),
    desktop: { defaultMs: 30_000, computerUseMs: 180_000, adbMs: 300_000 },
    providerUsageEnabled: envFlag(env, 'RELAY_PROVIDER_USAGE_ENABLED', false),
    secureLink: loadSecureLinkConfig(env),
    profileDiscovery: envFlag(env, 'RELAY_PROFILE_DISCOVERY', true),
    profileFiles: loadProfileFilesConfig(env),
    logLevel: logLevel as LogLevel,
    terminalShell: shell,
    pairingCode: env.RELAY_PAIRING_CODE || null,
    clientSpelling: clientSpelling(flags.clientSpelling ?? env.RELAY_CLIENT_SPELLING),
    refreshTtlDays: whole('RELAY_REFRESH_TTL_DAYS', 180, 0, 3650),
    personalDataRetentionDays: whole('RELAY_PERSONAL_DATA_RETENTION_DAYS', 0, 0, 36500),
    logRetentionDays: whole('RELAY_LOG_RETENTION_DAYS', 0, 0, 36500),
    logArchiveDir: env.RELAY_LOG_ARCHIVE_DIR ? path.resolve(env.RELAY_LOG_ARCHIVE_DIR) : null,
    witnessVkeys: (env.RELAY_WITNESS_VKEYS ?? '').split(/[\s,]+/).filter(Boolean),
    witnessUrls: loadWitnessUrls(env),
    checkpointPublishSeconds: whole('RELAY_CHECKPOINT_PUBLISH_SECONDS', 10, 0, 86400),
    personalDataKeysPerHour: whole('RELAY_PERSONAL_DATA_KEYS_PER_HOUR', 12, 1, 3600),
    allowInsecureApiBearer: Boolean(flags.allowInsecureApiKey) || envFlag(env, 'RELAY_ALLOW_INSECURE_API_BEARER', false),
    trustProxyHeaders: envFlag(env, 'RELAY_TRUST_PROXY_HEADERS', false),
    loopbackTrust: loopbackTrust(env.RELAY_LOOPBACK_TRUST),
    consoleSessionHours: whole('RELAY_CONSOLE_SESSION_HOURS', 12, 1, 24 * 30),
    apiServer: {
      enabled: envFlag(env, 'API_SERVER_ENABLED', Boolean(env.API_SERVER_KEY)),
      url: `http://${dialHost(apiHost)}:${apiPort}`,
      key: env.API_SERVER_KEY || null,
    },
    authTimeoutMs: 30_000,
    pingIntervalMs: whole('RELAY_SOCKET_PING_SECONDS', 30, 1, 3600) * 1000,
    sockets: loadSocketConfig(env),
    maxUnauthenticatedSockets: 64,
    maxUnauthenticatedPerAddress: 8,
    reconnects: { burst: whole('RELAY_RECONNECT_BURST', 20, 1, 1_000_000), perMinute: whole('RELAY_RECONNECTS_PER_MINUTE', 6, 1, 6_000) },
    eventStoreUrl: eventStoreUrl(env),
    standby: {
      enabled: relayRole(env.RELAY_ROLE, flags.standby === true, eventStoreUrl(env) !== null),
      pollMs: whole('RELAY_STANDBY_POLL_MS', 500, 50, 60_000),
      leaseMs: whole('RELAY_LEADER_LEASE_MS', 3000, 1000, 600_000),
      forgetMembersMs: whole('RELAY_MEMBERS_FORGET_SECONDS', 3600, 10, 30 * 86_400) * 1000,
    },
    segmentBytes: whole('RELAY_LOG_SEGMENT_MB', 64, 1, 1024) * 1024 * 1024,
    snapshotEvery: 50_000,
    sweepIntervalMs: 1_000,
    bodyLimitBytes: 1024 * 1024,
    headersTimeoutMs: whole('RELAY_HEADERS_TIMEOUT_SECONDS', 10, 1, 120) * 1000,
    requestTimeoutMs: whole('RELAY_REQUEST_TIMEOUT_SECONDS', 60, 1, 3600) * 1000,
    maxSlowConnectionsPerAddress: 16,
    phoneEnabled: envFlag(env, 'PHONE_ENABLED', false),
    phoneHomeChannelName: env.PHONE_HOME_CHANNEL_NAME?.trim().slice(0, 64) || 'Phone',
    phoneQueueMax: whole('PHONE_QUEUE_MAX', 500, 1, 100_000),
    injectedContextFile: env.RELAY_INJECTED_CONTEXT_FILE || path.join(svcHome, 'relay', 'injected-context.json'),
    terminalGraceSeconds: whole('RELAY_TERMINAL_GRACE_SECONDS', 600, 0, 7 * 86400),
    terminalRecording: loadTerminalRecordingConfig(env),
    tuiCommand: envText(env, 'RELAY_TUI_COMMAND'),
    tuiAgent: loadTuiAgentConfig(env, svcHome),
    bridge: loadBridgeConfig(env),
    media: loadMediaConfig(env, svcHome),
    voice: loadVoiceConfig(env),
    realtimeVoiceEnabled: envFlag(env, 'RELAY_REALTIME_VOICE_ENABLED', false),
    updateFeedUrl: updateFeedUrl(env),
    consoleDir: env.RELAY_CONSOLE_DIR ? path.resolve(env.RELAY_CONSOLE_DIR) : null,
    consoleHeartbeatMs: 15_000,
    disk: {
      minFreeBytes: whole('RELAY_DISK_MIN_FREE_MB', 256, 0, 1024 * 1024) * 1024 * 1024,
      checkIntervalMs: 5_000,
    },
  };
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
