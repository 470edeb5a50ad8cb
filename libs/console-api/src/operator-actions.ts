// ── The operator's actions on the pages that show the facts: rate-limit blocks (Pairing, Overview),
// renewals without a live session (Devices), ending a shell (Terminal), reading a thread (Threads).
// Types only, re-exported by index.ts. Times are epoch seconds.

/**
 * A rate-limit block in force (`/console/api/pairing/blocks`). `address` is what the limiter keys: an IPv4
 * address, an IPv6 /64 (`2001:db8:1:2::/64`), or either with the forwarder that vouched for it
 * (`127.0.0.1 via secure-link`). `kind`: the bad credentials that set it (pairing codes or session tokens).
 */
export type RateLimitBlockRow = { address: string; kind: 'code' | 'token'; since: number; until: number };

export type RateLimitBlocksView = { ok: true; server_time: number; blocks: RateLimitBlockRow[] };

/** `POST /console/api/pairing/unblock {address}`: the block lifted (its subject, as listed). */
export type UnblockAnswer = { ok: true; unblocked: string };

/**
 * A device whose session ended (it expired) but whose trusted-device renewal still lets it come back
 * with its refresh token, without pairing: only its id and its last session are known.
 */
export type RenewalWithoutSessionRow = {
  device_id: string;
  /** The session it last held (expired). */
  token_prefix: string;
  issued_at: number;
  expires_at: number;
  renewals: number;
  last_renewed_at: number | null;
  adopted: boolean;
};

/** `POST /console/api/sessions/end-device-trust {device_id}`. */
export type EndDeviceTrustAnswer = { ok: true; device_id: string; trust_ended: true };

/** `POST /console/api/terminal/shells/<shell id>/end`: the shell is gone and its end recorded. */
export type EndShellAnswer = { ok: true; shell_id: string; exit_code: number | null; signal: number | null };

/** One entry of a thread, oldest first: a message the agent posted, or a reply the phone sent. */
export type ThreadEntryRow =
  | {
      kind: 'message';
      id: string;
      title: string | null;
      text: string;
      at: number;
      /** queued, delivered, dropped, expired or cancelled. */
      state: string;
      /** The session it went to, once delivered. */
      delivered_to: string | null;
      /** Its title and text were sealed under a data key since destroyed (title null, text ''). */
      forgotten?: boolean;
    }
  | {
      kind: 'reply';
      id: string;
      text: string;
      at: number;
      device_name: string;
      token_prefix: string;
      reply_to: string | null;
      /** Its text was sealed under a data key since destroyed (''). */
      forgotten?: boolean;
    };

/** `GET /console/api/threads/<chat id>`: the entries the relay keeps (the newest 100; the log keeps all). */
export type ThreadDetail = {
  ok: true;
  server_time: number;
  chat_id: string;
  title: string | null;
  messages: number;
  replies: number;
  entries: ThreadEntryRow[];
  /** Entries older than those kept here (counted, no longer held by the relay). */
  older: number;
};
