/** The Bridge page's MCP session playback (`/console/api/bridge/trails`, issue 40 item 6). */

/** A screenshot of the session near a step: `media` is its media entry's token prefix while it lives, else null ("media expired"). */
export type TrailShot = { request_id: string; at: number | null; media: string | null };

export type TrailStepRow = {
  request_id: string;
  at: number | null;
  method: string;
  path: string;
  /** The arguments as the event records them: scalar fields reduced to their type, except those with no user content. */
  shape: Record<string, string | number | boolean | null>;
  outcome: string;
  status: number | null;
  latency_ms: number | null;
  safety: string | null;
  /** null: the step took no evidence (a read, or evidence off); a null hash: the phone gave none. */
  evidence: { before: string | null; after: string | null; changed: boolean | null } | null;
  shot_before: TrailShot | null;
  shot_after: TrailShot | null;
};

export type TrailRow = {
  session: string;
  client: string;
  token_prefix: string;
  device_name: string | null;
  started_at: number | null;
  last_at: number | null;
  steps: number;
  /** Older steps no longer kept (the read model keeps each session's newest). */
  dropped: number;
};

export type TrailsView = { ok: true; server_time: number; evidence: 'mcp' | 'all' | 'off'; trails: TrailRow[] };
export type TrailView = { ok: true; server_time: number; trail: TrailRow; steps: TrailStepRow[] };
