/*
 * `device` / `device_id` pick the phone of a Device Control call (in its query or its body); the relay
 * removes them before the command goes to the phone.
 */

/** The selector a query or body names (`device_id` first), or null. */
export function pickSelector(o: object): string | null {
  const r = o as Record<string, unknown>;
  const v = r.device_id ?? r.device;
  return typeof v === 'string' && v.length > 0 ? v : null;
}

/** The input without its selectors (and without undefined values): what the phone receives. */
export function withoutSelectors(o: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o ?? {})) if (k !== 'device' && k !== 'device_id' && v !== undefined) out[k] = v;
  return out;
}
