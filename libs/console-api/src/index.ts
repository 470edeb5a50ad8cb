/**
 * The operator console's wire shapes: what each `/console/api/*` route answers. The relay's console
 * controllers declare these as their return types and the console's `api/` files read them, so a field
 * renamed or dropped on one side fails the other's compile.
 *
 * Types only: the console's browser build imports this module (`import type`, enforced by ESLint) and
 * must gain no code from it. Times are epoch seconds unless a name says otherwise.
 */

// A relative path, not `@svc/events`: that index also holds the Node-side stores the browser build cannot type.
import type { ConsoleEvent } from '../../events/src/console-event';
import type { SecureLinkStatus } from './connectivity';

export type { ConsoleEvent, RelayEventType } from '../../events/src/console-event';
export type * from './connectivity';
export type * from './desktop';
export type * from './checkpoint';

/** A console page the relay serves; the console shows a nav entry only for these. */
export type FeatureEntry = { id: string; title: string; order: number };

// ── Overview, features and the event chain (`/console/api/overview`, `/features`, `/chain/verify`) ──

// In their own module: the Store page's shapes (store-metrics.ts) use them too.
import type { ChainStatus, LogSize } from './chain';
export type { ChainCut, ChainStatus, LogSize } from './chain';

export type Overview = {
  ok: true;
  server_time: number;
  version: string;
  started_at: number;
  uptime_seconds: number;
  listen: { host: string; port: number; url: string };
  tls: boolean;
  /** Whether Secure Link serves phones (`available`), is on but not running, or is off; its origin while it runs. */
  secure_link: { status: SecureLinkStatus; url: string | null };
  phones_online: number;
  sockets_online: number;
  sessions: number;
  pending_pairings: number;
  ready_codes: number;
  events_per_second: number;
  log: LogSize & { last_seq: number };
  chain: ChainStatus;
  console_streams: number;
  bridge: { devices: number; commands_total: number; stopped_by_safety: number };
  media: { entries: number; bytes: number };
  /** `enabled`: PHONE_ENABLED (off: the agent cannot message the phone). */
  threads: { queued: number; subscribed: boolean; enabled: boolean };
  /** Addresses the rate limiter blocks right now (the Pairing page lists them, with Unblock). */
  rate_limit_blocks: number;
  features: FeatureEntry[];
  recent_events: ConsoleEvent[];
  /** PostgreSQL only: leader or hot standby (a standby's console is read-only), the leader's epoch, a standby's lag. */
  role?: { role: 'leader' | 'standby'; epoch: number | null; lag_records: number | null; lag_ms: number | null };
};

export type FeaturesAnswer = { ok: true; features: FeatureEntry[] };

export type ChainVerifyAnswer = { ok: true; chain: ChainStatus };

// ── Events (`/console/api/events`; the stream sends `ConsoleEvent`s one by one) ──

export type EventsPage = {
  ok: true;
  order: 'asc' | 'desc';
  events: ConsoleEvent[];
  more: boolean;
  next: { before: number } | { after: number } | null;
  last_seq: number;
  filtered: boolean;
  server_time: number;
};

// ── Devices (`/console/api/sessions`) ──

/** The device's trusted-device renewal (never its refresh token). */
export type TrustedDeviceView = { issued_at: number; expires_at: number; renewals: number; last_renewed_at: number | null; adopted: boolean };

export type SessionRow = {
  token_prefix: string;
  device_name: string;
  device_id: string;
  device_model: string | null;
  device_platform: string | null;
  device_hostname: string | null;
  /** What the client says it is (`android`, `desktop`...; `unknown` when it did not say). */
  client_surface: string;
  device_form_factor: string;
  created_at: number;
  first_seen: number;
  last_seen: number;
  expires_at: number | null;
  /** channel → epoch seconds (null: as long as the session). */
  grants: Record<string, number | null>;
  transport_hint: string | null;
  /** The spec's transport security label (`Secure (TLS)`, `Plain (on lan)`...). */
  transport: string;
  online: boolean;
  connections: Array<{ ip: string; path: string; since: number }>;
  /** null: the device has no renewal. */
  trusted_device: TrustedDeviceView | null;
  /** Offline: when its last socket closed (null: online, or never connected since pairing). */
  offline_since: number | null;
};

/** `renewals_without_session`: devices whose session ended that may still renew it (end them here). */
export type SessionsView = { ok: true; server_time: number; sessions: SessionRow[]; renewals_without_session: RenewalWithoutSessionRow[] };

/** `forgotten_keys`: with `{ forget: true }`, how many data keys of its content went. */
export type RevokeAnswer = { ok: true; revoked: string; revoked_self: boolean; forgotten_keys?: number };

export type EndTrustAnswer = { ok: true; device_id: string; trust_ended: boolean };

export type ShortenAnswer = { ok: true; token_prefix: string; expires_at: number | null; grants: Record<string, number | null> };

// ── Pairing (`/console/api/pairing`) ──

export type PairingCodeRow = {
  /** The first 8 characters of the code's digest: a reference, never the code. */
  code_ref: string;
  request_id: string | null;
  state: 'ready' | 'pending';
  source: 'register' | 'mint' | 'env' | 'public';
  created_at: number;
  expires_at: number;
  ip: string | null;
  device_name: string | null;
  session_ttl_seconds: number | null;
  grants: string[] | null;
};

/** `secure_link`: Secure Link serves phones, so a QR minted now carries its pinned TLS route. */
export type PairingView = { ok: true; server_time: number; tls: boolean; secure_link: boolean; pending: PairingCodeRow[]; ready: PairingCodeRow[] };

/** `POST /console/api/pairing/mint`: `POST /pairing/mint`'s answer plus `code_ref`. */
export type MintAnswer = {
  ok: true;
  code: string;
  code_ref: string;
  /** Present when no phone can reach any route the QR names (the relay bound to loopback): what to do instead. */
  warning?: string;
  /** The QR's JSON text: what the app's scanner reads (it takes raw JSON only, not the svc-relay:// / hermes-relay:// URL). */
  qr_payload: string;
  pairing_url: string;
  expires_at: number;
  host: string;
  port: number;
  tls: boolean;
  relay_url: string;
  dashboard_url?: string;
  endpoints?: Record<string, unknown>[];
};

export type ApproveAnswer = { ok: true; request_id: string; status: string };

export type DenyAnswer = { ok: true; request_id: string; status: string };

// ── Bridge (`/console/api/bridge`) ──

export type BridgeDeviceRow = {
  token_prefix: string;
  device_id: string;
  device_name: string;
  active: boolean;
  online: boolean;
  screen_on: boolean | null;
  battery: number | null;
  current_app: string | null;
  accessibility_enabled: boolean | null;
  master_enabled: boolean;
  device_control_supported: boolean;
  trusted_destructive_verbs: string[];
  /** The idle minutes that switch Device Control off (0: never, or none reported by a phone that keeps its own). */
  auto_disable_minutes: number;
  /** The relay's deadline (epoch seconds); null when the phone keeps its own idle expiry. */
  auto_disable_at: number | null;
  /** Who switches Device Control off after it was idle: the relay (its deadline) or the phone (its own timer). */
  auto_disable_by: 'phone' | 'relay';
  reported_at: number | null;
  last_command_at: number | null;
};

/** One Device Control command: route, outcome, latency and the body's shape, never its content. */
export type BridgeActivityRow = {
  request_id: string;
  token_prefix: string;
  method: string;
  path: string;
  shape: Record<string, string | number | boolean | null>;
  at: number;
  outcome: string;
  status: number | null;
  latency_ms: number | null;
  safety: string | null;
  /** How the command came when not over HTTP (`mcp`), with the MCP client's own name. */
  via?: 'mcp';
  client?: string;
};

export type SafetyRow = {
  seq: number;
  at: number;
  decision: string;
  token_prefix: string;
  request_id: string | null;
  path: string | null;
  reason: string;
  package: string | null;
  verb: string | null;
  idle_minutes?: number;
  confirmed_by?: 'phone' | 'relay' | 'mcp_client';
  via?: 'mcp';
  client?: string;
};

export type PendingConfirmationRow = { request_id: string; token_prefix: string; path: string; verb: string; deadline: number | null };

export type BridgeView = {
  ok: true;
  server_time: number;
  active: string | null;
  devices: BridgeDeviceRow[];
  in_flight: number;
  commands_total: number;
  decisions: Record<string, number>;
  pending_confirmations: PendingConfirmationRow[];
  activity: BridgeActivityRow[];
  safety: SafetyRow[];
};

export type SelectActiveAnswer = { ok: true; active: string };

// ── Media (`/console/api/media`) ──

export type MediaRow = {
  token_prefix: string;
  name: string;
  /** The host path: shown to the operator only (on hover), never in a URL. */
  path: string;
  content_type: string;
  size: number;
  sensitive: boolean;
  owned: boolean;
  source: string;
  registered_at: number | null;
  expires_at: number | null;
  fetch_count: number;
  last_fetched_at: number | null;
};

export type MediaView = { ok: true; server_time: number; count: number; bytes: number; entries: MediaRow[] };

// ── Threads (`/console/api/threads`) ──

export type ThreadsView = {
  ok: true;
  server_time: number;
  /** PHONE_ENABLED: whether the agent may message the phone at all (off: posts are refused). */
  enabled: boolean;
  subscriber: { token_prefix: string; device_name: string; since: number | null } | null;
  queued: Array<{ message_id: string; chat_id: string; title: string | null; text: string; posted_at: number | null; expires_at: number | null }>;
  threads: Array<{ chat_id: string; title: string | null; messages: number; replies: number; last_activity: number | null }>;
  notifications: Array<{
    entry_id: string;
    token_prefix: string;
    device_name: string;
    package_name: string;
    title: string | null;
    text: string | null;
    received_at: number | null;
    /** Its title and text were sealed under a data key since destroyed (both null). */
    forgotten?: boolean;
  }>;
};

// ── Terminal (`/console/api/terminal`) ──

export type ShellRow = {
  shell_id: string;
  session_name: string;
  token_prefix: string;
  device_id: string;
  /** The device's name, as the Devices page shows it (its id when its session is gone). */
  device_name: string;
  pid: number;
  shell: string;
  cols: number;
  rows: number;
  attached: boolean;
  opened_at: number | null;
  detached_at: number | null;
  grace_expires_at: number | null;
  paused: boolean;
};

export type TuiRow = { tui_id: string; token_prefix: string; pid: number; program: string; started_at: number | null };

export type TerminalView = { ok: true; server_time: number; shells: ShellRow[]; tuis: TuiRow[] };
export type * from './terminal-recordings';

// ── The operator's actions (blocks, renewals, shells, threads): in operator-actions.ts ──
import type { RenewalWithoutSessionRow } from './operator-actions';
export type * from './operator-actions';
export type * from './mcp-trails';

// ── Personal data: in personal-data.ts ──
export type * from './personal-data';
export type * from './secrets';

// ── Metrics and Store: in store-metrics.ts ──
export type * from './store-metrics';

// ── Voice and Profiles (their own modules) ──

export type * from './voice';
export type * from './profiles';
export type * from './sign-in';
