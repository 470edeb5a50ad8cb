import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export type LogLevel = 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';
export const LOG_LEVELS: readonly LogLevel[] = ['DEBUG', 'INFO', 'WARNING', 'ERROR'];

export type RelayConfig = {
  host: string;
  port: number;
  svcHome: string;
  tls: { cert: string; key: string } | null;
  webapiUrl: string;
  svcConfigPath: string;
  logLevel: LogLevel;
  terminalShell: string | null;
  /** RELAY_PAIRING_CODE: registered at start (the value itself is never logged). */
  pairingCode: string | null;
  allowInsecureApiBearer: boolean;
  trustProxyHeaders: boolean;
  apiServer: { enabled: boolean; url: string; key: string | null };
  /** Tunables with safe defaults; tests shrink them. */
  authTimeoutMs: number;
  maxUnauthenticatedSockets: number;
  segmentBytes: number;
  snapshotEvery: number;
  sweepIntervalMs: number;
  bodyLimitBytes: number;
  /** RELAY_MEDIA_* and SVC_WORKSPACE (spec 4.13). */
  media: MediaConfig;
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
};

export type StartFlags = Partial<{
  host: string;
  port: number;
  noSsl: boolean;
  shell: string;
  webapiUrl: string;
  logLevel: string;
  config: string;
  allowInsecureApiKey: boolean;
}>;

export class ConfigError extends Error {}

const truthy = (v: string | undefined): boolean => v === '1' || v?.toLowerCase() === 'true' || v?.toLowerCase() === 'yes';

export function svcHomeFrom(env: NodeJS.ProcessEnv): string {
  return path.resolve(env.SVC_HOME || path.join(os.homedir(), '.svc'));
}

/** Spec 4.13: flags win over the environment, which wins over the defaults. */
export function loadConfig(env: NodeJS.ProcessEnv, flags: StartFlags = {}): RelayConfig {
  const svcHome = svcHomeFrom(env);
  const port = flags.port ?? (env.RELAY_PORT ? Number(env.RELAY_PORT) : 8767);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`RELAY_PORT/--port must be 0-65535, got "${env.RELAY_PORT ?? flags.port}"`);
  const logLevel = (flags.logLevel ?? env.RELAY_LOG_LEVEL ?? 'INFO').toUpperCase();
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) throw new ConfigError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  let tls: RelayConfig['tls'] = null;
  if (!flags.noSsl && (env.RELAY_SSL_CERT || env.RELAY_SSL_KEY)) {
    if (!env.RELAY_SSL_CERT || !env.RELAY_SSL_KEY) throw new ConfigError('TLS needs both RELAY_SSL_CERT and RELAY_SSL_KEY');
    for (const f of [env.RELAY_SSL_CERT, env.RELAY_SSL_KEY]) if (!fs.existsSync(f)) throw new ConfigError(`TLS file not found: ${f}`);
    tls = { cert: env.RELAY_SSL_CERT, key: env.RELAY_SSL_KEY };
  }
  const shell = flags.shell ?? env.RELAY_TERMINAL_SHELL ?? env.SHELL ?? null;
  const apiPort = env.API_SERVER_PORT ?? '8642';
  const apiHost = env.API_SERVER_HOST ?? '127.0.0.1';
  return {
    host: flags.host ?? env.RELAY_HOST ?? '0.0.0.0',
    port,
    svcHome,
    tls,
    webapiUrl: flags.webapiUrl ?? env.RELAY_WEBAPI_URL ?? 'http://localhost:8642',
    svcConfigPath: flags.config ?? env.RELAY_SVC_CONFIG ?? path.join(svcHome, 'config.yaml'),
    logLevel: logLevel as LogLevel,
    terminalShell: shell,
    pairingCode: env.RELAY_PAIRING_CODE || null,
    allowInsecureApiBearer: Boolean(flags.allowInsecureApiKey) || truthy(env.RELAY_ALLOW_INSECURE_API_BEARER),
    trustProxyHeaders: truthy(env.RELAY_TRUST_PROXY_HEADERS),
    apiServer: {
      enabled: env.API_SERVER_ENABLED === undefined ? Boolean(env.API_SERVER_KEY) : truthy(env.API_SERVER_ENABLED),
      url: `http://${apiHost === '0.0.0.0' ? '127.0.0.1' : apiHost}:${apiPort}`,
      key: env.API_SERVER_KEY || null,
    },
    authTimeoutMs: 30_000,
    maxUnauthenticatedSockets: 64,
    segmentBytes: 64 * 1024 * 1024,
    snapshotEvery: 50_000,
    sweepIntervalMs: 1_000,
    bodyLimitBytes: 1024 * 1024,
    media: loadMediaConfig(env, svcHome),
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
  const roots = (env.RELAY_MEDIA_ALLOWED_ROOTS ?? '').split(path.delimiter).map((r) => r.trim()).filter(Boolean);
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
  };
}

export function relayDir(config: Pick<RelayConfig, 'svcHome'>): string {
  return path.join(config.svcHome, 'relay');
}
