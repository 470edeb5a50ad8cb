// ── Connectivity (`/console/api/connectivity`, `/connectivity/preflight`): types only, re-exported by index.ts ──

export type SecureLinkStatus = 'available' | 'unavailable' | 'disabled';

/** The relay's own listener (RELAY_HOST, RELAY_PORT, RELAY_SSL_*). */
export type ListenerView = {
  host: string;
  port: number;
  /** The URL this machine dials. */
  url: string;
  /** The socket URL a pairing QR gives phones (a bind-all host becomes the LAN address). */
  advertised_url: string;
  bind_all: boolean;
  /** Bound to loopback: no phone can dial it directly. */
  loopback_only: boolean;
  lan_address: string | null;
  /** Why no phone can use a QR minted now (the pairing rule, phone-reach.ts), or null. */
  phone_warning: string | null;
  tls: boolean;
  /** The TLS certificate's expiry, when TLS is on and its file reads. */
  tls_cert: { not_after: string; days_left: number } | null;
};

export type SecureLinkView = {
  enabled: boolean;
  status: SecureLinkStatus;
  /** The origin phones reach while it runs. */
  url: string | null;
  /** RELAY_SECURE_LINK_HOST / _PORT as configured (the next start's bind). */
  host: string;
  port: number;
  /** The SPKI pin phones hold (public: the QR carries it). */
  pin: string | null;
  source: 'generated' | 'operator' | null;
  subject_alt_names: string[];
  not_after: string | null;
  days_left: number | null;
  /** Why it is not running, when enabled. */
  last_error: string | null;
  /** The last identity change: phones paired through Secure Link before it must pair again. */
  identity_changed_at: number | null;
  previous_pin: string | null;
};

export type ReachView = {
  enabled: boolean;
  /** `disabled`, `unavailable` (misconfigured), `connecting`, `connected`, `backoff`... */
  state: string;
  broker_url: string | null;
  host_id: string | null;
  connected_at: number | null;
  /** The last `secure_link.reach_changed` in this run, and when: its attempts in between are not logged. */
  last_change: 'connected' | 'lost' | 'unavailable' | null;
  last_change_at: number | null;
  last_error: string | null;
  active_streams: number | null;
};

/** One way to reach the relay that a QR minted now would carry, in the order clients try them. */
export type RouteCandidateRow = {
  /** `relay` (the socket URL), `api_server` (the chat backend), or an endpoint role (`plugin_proxy`, `outbound_broker`). */
  role: string;
  label: string;
  url: string;
  security: string;
  /** The route clients are steered to (Secure Link when it runs, else the relay socket). */
  recommended: boolean;
  /** What an operator should know (a loopback address phones cannot dial, a credential made at mint). */
  note: string | null;
};

export type ConnectivityView = {
  ok: true;
  server_time: number;
  listener: ListenerView;
  secure_link: SecureLinkView;
  reach: ReachView;
  routes: RouteCandidateRow[];
};

/** `POST /console/api/connectivity/preflight` `{host, port?}`: what that host and port would mean for Secure Link. */
export type PreflightCheckRow = { id: string; ok: boolean | null; detail: string };

export type PreflightAnswer = {
  ok: true;
  server_time: number;
  host: string;
  port: number;
  /** `ready`: every check passed; `problems`: at least one failed; `unknown`: none failed, some could not be told here. */
  verdict: 'ready' | 'problems' | 'unknown';
  /** The origin a QR would name with this host and port. */
  candidate_url: string;
  checks: PreflightCheckRow[];
  restart_required: boolean;
  re_pair_required: boolean;
  took_ms: number;
};
