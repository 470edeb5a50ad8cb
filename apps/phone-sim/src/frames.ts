import type { RawData } from 'ws';

/*
 * What the simulator reads from the relay, read as a hostile peer's bytes: one JSON object with string `channel` and
 * `type`, a `payload` object (absent or null is `{}`, as WIRE.md's envelope defaults it); anything else is dropped
 * whole, so no handler ever sees a null payload or a number where it reads a string.
 */

export type Frame = { channel: string; type: string; id?: string; payload: Record<string, unknown> };

/** The largest frame the simulator takes (the `ws` client closes 1009 past it): far above any answer the relay sends. */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;

export function readFrame(data: RawData): Frame | null {
  let f: unknown;
  try {
    f = JSON.parse(Array.isArray(data) ? Buffer.concat(data).toString() : data.toString());
  } catch {
    return null;
  }
  if (!isObject(f)) return null;
  const payload = f.payload === undefined || f.payload === null ? {} : f.payload;
  if (typeof f.channel !== 'string' || typeof f.type !== 'string' || !isObject(payload)) return null;
  return { channel: f.channel, type: f.type, ...(typeof f.id === 'string' ? { id: f.id } : {}), payload };
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Kotlin's `jsonPrimitive.contentOrNull` (the way the app reads a field): a string's text, a number's digits, else null. */
export const contentOf = (v: unknown): string | null =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;

/**
 * Peer text made safe to print on the operator's terminal: control characters (escape sequences included) shown as
 * `\uXXXX`, and at most `max` characters. One pass over the string, no regex on it.
 */
export function printable(text: string, max = 500): string {
  let out = '';
  const end = Math.min(text.length, max);
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    out += c < 0x20 || (c >= 0x7f && c < 0xa0) ? `\\u${c.toString(16).padStart(4, '0')}` : text[i];
  }
  return text.length > max ? `${out}… (${text.length - max} more characters)` : out;
}
