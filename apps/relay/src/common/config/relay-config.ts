import type { EvidenceMode, Spelling } from '@svc/domain';

/** What the relay runs with: `loadConfig` (config.ts) builds it from the flags, the environment and the defaults. */
export type LoopbackTrust = 'loopback' | 'key';
export const LOOPBACK_TRUST: readonly LoopbackTrust[] = ['loopback', 'key'];

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
  /** RELAY_PROFILE_*_MAX_BYTES: how much of a profile's SOUL and memory files is read and written (spec 4.7). */
  profileFiles: ProfileFilesConfig;
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
  /** RELAY_PERSONAL_DATA_RETENTION_DAYS (default 0: keep): notification text and Thread content older than this is forgotten (its data keys destroyed). */
  personalDataRetentionDays: number;
  /** Whole segments of the file log older than this many days are pruned (0: kept for ever). */
  logRetentionDays: number;
  /** Where pruned segments go instead of being deleted (null: deleted). */
  logArchiveDir: string | null;
  /** RELAY_WITNESS_VKEYS: the cosignature/v1 verifier keys of the witnesses whose cosignatures the relay keeps (issue 39). */
  witnessVkeys: string[];
  /**
   * RELAY_WITNESS_URLS: `<witness name>=<submission prefix>` entries; the relay submits each published
   * checkpoint to those witnesses (C2SP tlog-witness `add-checkpoint`) and keeps their cosignatures.
   */
  witnessUrls: Array<{ name: string; url: string }>;
  /**
   * RELAY_CHECKPOINT_PUBLISH_SECONDS (default 10; 0: every fetch of a grown tree): how long the published
   * checkpoint (GET /log/checkpoint) stays fixed, so witnesses' cosignatures of it are shown beside it.
   */
  checkpointPublishSeconds: number;
  /**
   * RELAY_PERSONAL_DATA_KEYS_PER_HOUR (default 12): the most data keys one device (or the host) gets in an hour.
   * A key that another device received content under (a Thread message queued for no phone, then delivered)
   * is not used again, so forgetting that device does not take later content with it; past this many, the
   * last key is used again (forgetting a receiver then takes the rest of that hour's content under it too).
   */
  personalDataKeysPerHour: number;
  allowInsecureApiBearer: boolean;
  trustProxyHeaders: boolean;
  /**
   * RELAY_LOOPBACK_TRUST: what the spec's platform routes (those the reference host tools call on loopback
   * with no credential) ask of a loopback caller. `loopback` (default): nothing more, as the host tools need;
   * `key`: the operator key or a paired bearer too. Operator routes always need the key.
   */
  loopbackTrust: LoopbackTrust;
  /** RELAY_CONSOLE_SESSION_HOURS (default 12): how long a browser stays signed in to the console after opening a sign-in link. */
  consoleSessionHours: number;
  apiServer: { enabled: boolean; url: string; key: string | null };
  /** Tunables with safe defaults; tests shrink them. */
  authTimeoutMs: number;
  /**
   * RELAY_SOCKET_PING_SECONDS (default 30): a protocol ping to every socket (phone, desktop, voice, Reach)
   * each interval; one not answered by the next and the socket is closed (1008 `ping_timeout`).
   */
  pingIntervalMs: number;
  /** The bounds every socket keeps both ways (RELAY_SOCKET_*; common/sockets/socket-guard.ts). */
  sockets: SocketConfig;
  maxUnauthenticatedSockets: number;
  /** Per address (IPv6 per /64), within maxUnauthenticatedSockets. */
  maxUnauthenticatedPerAddress: number;
  /**
   * A device's authenticated connects (reconnects and renewals): RELAY_RECONNECT_BURST at once (default 20),
   * then RELAY_RECONNECTS_PER_MINUTE (default 6); past them `auth.fail relay.reconnect_budget` with `retry_after`.
   */
  reconnects: { burst: number; perMinute: number };
  /** RELAY_EVENT_STORE: a postgres:// URL puts the log and its snapshots in that database; null: the file log. */
  eventStoreUrl: string | null;
  /**
   * `--standby` / RELAY_ROLE=standby (PostgreSQL only): follow the leader's log and take over when its session
   * ends. RELAY_STANDBY_POLL_MS (default 500): how often the log is read without a notification and the lock
   * asked for. RELAY_LEADER_LEASE_MS (default 3000): how long a leader that stopped answering keeps the lock.
   * RELAY_MEMBERS_FORGET_SECONDS (default 3600): a relay not seen for this long leaves svc_relay_members.
   */
  standby: { enabled: boolean; pollMs: number; leaseMs: number; forgetMembersMs: number };
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
  /** RELAY_TERMINAL_RECORDING*: every shell recorded as an asciicast file under the home (off by default). */
  terminalRecording: TerminalRecordingConfig;
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

/**
 * A profile file is served whole up to the size it may be written at, so the app never edits a cut draft
 * (issue 35); one past it is served cut, and a save without If-Match of a file served cut is refused.
 */
export type ProfileFilesConfig = {
  /** RELAY_PROFILE_SOUL_MAX_BYTES (default 1 MiB, the app's and the reference's write ceiling): SOUL.md served whole and written up to this. */
  soulMaxBytes: number;
  /** RELAY_PROFILE_MEMORY_MAX_BYTES (default 1 MiB): the same for one memory file. */
  memoryMaxBytes: number;
  /** RELAY_PROFILE_MEMORY_LIST_MAX_BYTES (default 8 MiB): the text of all memory files one listing serves; files past it are served cut. */
  memoryListMaxBytes: number;
};

export type SocketConfig = {
  /** RELAY_SOCKET_BUFFER_MB (default 8): unsent output past which a socket is closed 1013 `slow_consumer`; input waiting at which reading pauses. */
  bufferBytes: number;
  /** RELAY_SOCKET_QUEUED_FRAMES (default 64): frames read but not yet handled at which reading pauses. */
  queuedFrames: number;
  /** RELAY_SOCKET_FRAMES_PER_SECOND (default 200): the average rate a peer's frames are handled at, past its burst. */
  framesPerSecond: number;
  /** RELAY_SOCKET_FRAME_BURST (default 2000): frames handled at once before the rate applies. */
  frameBurst: number;
};

export type TerminalRecordingConfig = {
  /** RELAY_TERMINAL_RECORDING=1: record every shell's output (and resizes). */
  enabled: boolean;
  /** RELAY_TERMINAL_RECORDING_INPUT=1: typed input too (off: it holds passwords). */
  input: boolean;
  /** RELAY_TERMINAL_RECORDING_MAX_MB (default 64) in bytes: one recording stops growing here (marked truncated). */
  maxBytes: number;
  /** RELAY_TERMINAL_RECORDINGS_TOTAL_MB (default 1024) in bytes: past it the oldest recordings are removed. */
  totalBytes: number;
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
  /** `/mcp` sessions: RELAY_MCP_SESSIONS_PER_DEVICE, RELAY_MCP_MAX_SESSIONS, RELAY_MCP_IDLE_MINUTES (mcp-sessions.ts). */
  mcpSessions: { perDevice: number; total: number; idleMs: number };
  /** RELAY_MCP_SCREENSHOT_MAX_SIDE: an MCP screenshot's long side in pixels unless the call says (screen-image.ts). */
  mcpScreenshotMaxSide: number;
  /** RELAY_BRIDGE_EVIDENCE: which commands carry the screen's hash before and after (libs/domain evidence.ts). */
  evidence: EvidenceMode;
  /** RELAY_MCP_TRAILS: the recent MCP sessions whose steps the console plays back (mcp-trails.ts). */
  mcpTrails: number;
  /** MCP element tools: RELAY_MCP_TREE_MAX_ELEMENTS, RELAY_MCP_TREE_MAX_TEXT, RELAY_MCP_WAIT_MAX_MS, RELAY_MCP_WAIT_MAX_POLLS (mcp-elements.ts). */
  mcpElements: { maxElements: number; maxText: number; waitMaxMs: number; waitMaxPolls: number };
  /** RELAY_MCP_SECRETS_MAX: how many named secrets the operator may register (android_type_secret). */
  mcpSecretsMax: number;
};

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

export type SecureLinkConfig = {
  enabled: boolean;
  /** Bind address, and the advertised host unless it binds all (then this machine's LAN address). */
  host: string;
  port: number;
  cert: string | null;
  key: string | null;
  /** Where `/dashboard` goes (loopback http only). */
  dashboardUrl: string;
  /**
   * Reach (experimental): the connector to a broker. The host token comes from the environment only; `caFile`
   * is a private CA for the broker's certificate (RELAY_SECURE_LINK_BROKER_CA_FILE), the system's otherwise.
   */
  reach: { enabled: boolean; brokerUrl: string | null; hostToken: string | null; hostIdFile: string | null; caFile: string | null };
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
  clientSpelling: string;
  standby: boolean;
}>;

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
  /**
   * RELAY_VOICE_RESUME_GRACE_SECONDS: how long a voice session whose socket dropped waits for a resume (default
   * 300: the app's route-loss retry window, RelayVoiceClient.kt 127-128).
   */
  resumeGraceSeconds: number;
  /** RELAY_VOICE_REPLAY_MAX_FRAMES: frames a voice session holds for a resume (default 256). */
  replayMaxFrames: number;
  /** RELAY_VOICE_REPLAY_MAX_BYTES: bytes of frames a voice session holds for a resume (default 2 MiB). */
  replayMaxBytes: number;
  /** RELAY_VOICE_HELD_MAX_BYTES: bytes of frames all held (dropped) sessions hold together (default 32 MiB; past it the one held longest ends). */
  heldMaxBytes: number;
};
