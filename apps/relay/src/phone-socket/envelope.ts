import { jsonDepthExceeds, MAX_JSON_DEPTH } from '@svc/events';
/** One frame of the multiplexed socket (WIRE.md). */
export type Envelope = { channel: string; type: string; id?: string; payload: Record<string, unknown> };

export const KNOWN_CHANNELS = ['system', 'chat', 'terminal', 'tui', 'bridge', 'notifications', 'proactive', 'desktop', 'pairing'] as const;

/** The grant a phone needs to use a channel; null: any paired session. */
export const CHANNEL_GRANT: Readonly<Record<string, string | null>> = {
  chat: 'chat',
  terminal: 'terminal',
  tui: 'tui',
  bridge: 'bridge',
  desktop: 'desktop',
  notifications: null,
  proactive: null,
};

/** Close codes the relay uses (4000-4999 are the application's). */
export const CLOSE = {
  authFailed: 4401,
  revoked: 4403,
  authTimeout: 4408,
  badFrame: 4400,
  shutdown: 1001,
  tooBig: 1009,
  /** RFC 6455 "Try Again Later": dropped to make room under the unauthenticated-socket caps, or an auth refused for now. */
  tryAgainLater: 1013,
  /** A handshake that failed on the relay's side (RFC 6455 "Internal Error"). */
  internalError: 1011,
} as const;

export type ParseResult = { ok: true; envelope: Envelope } | { ok: false; message: string };

/** Validates a text frame; nothing malformed goes further than this. */
export function parseEnvelope(data: string): ParseResult {
  let raw: unknown;
  if (jsonDepthExceeds(data)) return { ok: false, message: `frame nests JSON deeper than ${MAX_JSON_DEPTH} levels` };
  try {
    raw = JSON.parse(data);
  } catch {
    return { ok: false, message: 'frame is not valid JSON' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, message: 'frame must be a JSON object {channel, type, id, payload}' };
  const { channel, type, id, payload } = raw as Record<string, unknown>;
  if (typeof channel !== 'string' || channel.length === 0 || channel.length > 32)
    return { ok: false, message: 'channel: a string of 1-32 characters is required' };
  if (typeof type !== 'string' || type.length === 0 || type.length > 64)
    return { ok: false, message: 'type: a string of 1-64 characters is required' };
  if (id !== undefined && id !== null && (typeof id !== 'string' || id.length > 128))
    return { ok: false, message: 'id: a string of at most 128 characters' };
  if (payload !== undefined && payload !== null && (typeof payload !== 'object' || Array.isArray(payload))) {
    return { ok: false, message: 'payload: must be an object' };
  }
  return { ok: true, envelope: { channel, type, id: (id as string | undefined) ?? undefined, payload: (payload as Record<string, unknown>) ?? {} } };
}
