import { canonicalPath } from './device-control-routes';

/**
 * RELAY_BRIDGE_EVIDENCE (issue 40, item 6): which commands carry the screen's hash before and after. `mcp`
 * (the default): an agent's actions over the MCP server, whose sessions the console plays back; `all`: the
 * HTTP routes' too; `off`: none. Each costs two `/screen_hash` round trips to the phone (docs/BENCHMARKS.md).
 */
export const EVIDENCE_MODES = ['mcp', 'all', 'off'] as const;
export type EvidenceMode = (typeof EVIDENCE_MODES)[number];

/**
 * The routes that change what the screen shows: gestures, typing, keys, apps and intents brought forward,
 * and the sideload routes that open a screen of their own. Not reads, not `/wait` (it changes nothing, it
 * waits), not the clipboard (off screen) or the event stream's switch.
 */
const CHANGES_SCREEN = new Set([
  '/tap',
  '/tap_text',
  '/long_press',
  '/drag',
  '/type',
  '/swipe',
  '/scroll',
  '/press_key',
  '/open_app',
  '/media',
  '/send_intent',
  '/broadcast',
  '/call',
  '/send_sms',
  '/share_media',
  '/send_mms',
  '/return_to_svc',
]);

/** Whether a command gets evidence under `mode`; `viaMcp`: it came through the MCP server. */
export function takesEvidence(mode: EvidenceMode, method: string, path: string, viaMcp: boolean): boolean {
  if (mode === 'off' || (mode === 'mcp' && !viaMcp)) return false;
  return method === 'POST' && CHANGES_SCREEN.has(canonicalPath(path));
}

/** The hash a `/screen_hash` answer gives, or null when it gives none (an app without the route, a refusal). */
export function screenHashOf(status: number, body: Readonly<Record<string, unknown>>): string | null {
  const h = body.hash;
  // A SHA-256 in hex is what the app sends; anything else (or longer) is not evidence an auditor could compare.
  return status < 300 && typeof h === 'string' && /^[0-9a-f]{8,128}$/i.test(h) ? h.toLowerCase() : null;
}
