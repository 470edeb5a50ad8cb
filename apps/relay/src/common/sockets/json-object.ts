import { jsonDepthExceeds } from '@svc/events';

/**
 * A peer's text frame as a JSON object, or null: not JSON, nested past MAX_JSON_DEPTH, or JSON that is
 * not an object (`null`, an array, a number, a string). Every socket frame from a peer (a broker, a
 * host, a voice provider) goes through this before any property is read: `JSON.parse('null').type`
 * throws, and a throw in a socket's message handler ends the process.
 */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  if (jsonDepthExceeds(text)) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}
