import { parseJsonObject } from '../common/sockets/json-object';

/**
 * The sentence in an upstream's error (a voice provider, the agent API), never its JSON: the app shows a voice
 * error's text as it is (a `voice.error`'s `message`, RelayVoiceClient.kt 2974-2980), so `{"error": {...}}`
 * there reads as raw JSON on the phone. One rule for every upstream the relay relays errors from.
 */

/** An `error` field as OpenAI-compatible APIs send it: `{message}` or a string. */
export function errorFieldText(error: unknown): string {
  if (typeof error === 'string') return error;
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : 'error';
}

/**
 * An error body's sentence: `error` (as above), else `detail` (FastAPI) or `message`; a JSON body with none of
 * them says so; a body that is not JSON is its own text, on one line.
 */
export function errorBodyText(body: string): string {
  const obj = parseJsonObject(body);
  if (obj === null) return body.replace(/\s+/g, ' ').trim();
  if (obj.error !== undefined && obj.error !== null) return errorFieldText(obj.error);
  for (const k of ['detail', 'message'] as const) if (typeof obj[k] === 'string') return obj[k];
  return 'an error without a message';
}
