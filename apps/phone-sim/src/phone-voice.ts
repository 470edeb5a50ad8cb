import * as fs from 'node:fs';
import * as path from 'node:path';
import { printable } from './frames';
import { httpUrl } from './urls';

/*
 * Relay voice as the app calls it (network/relay/RelayVoiceClient.kt, paths under app/src/main/kotlin/com/hermesandroid/
 * relay/ of the reference checkout): speak a reply with `POST /voice/synthesize`, dictate with `POST /voice/transcribe`.
 * Both with the paired session's bearer; the relay's answers are read no further than a bound.
 */

/** The most audio the simulator reads back from `/voice/synthesize` (a reply of the 5000 characters the relay takes is far less). */
const MAX_AUDIO_BYTES = 32 * 1024 * 1024;
/** The most it uploads to `/voice/transcribe` (the relay's own default bound; it answers 413 past its setting). */
const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

export type VoiceResult = { ok: true; bytes: Buffer; type: string } | { ok: false; status: number; error: string };

/** synthesize (RelayVoiceClient.kt:239-300): JSON `{text}`, `Accept: audio/mpeg`; a refusal's body is one line of text. */
export async function speak(relayUrl: string, token: string, text: string): Promise<VoiceResult> {
  if (!text.trim()) return { ok: false, status: 0, error: 'synthesize: text is blank' };
  const res = await fetch(`${httpUrl(relayUrl)}/voice/synthesize`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, accept: 'audio/mpeg', 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ text }),
  });
  const body = await readBounded(res, MAX_AUDIO_BYTES);
  if (!res.ok || body === null) return { ok: false, status: res.status, error: refusal(res.status, body) };
  return { ok: true, bytes: body, type: res.headers.get('content-type') ?? 'application/octet-stream' };
}

/**
 * transcribe (RelayVoiceClient.kt:172-235): multipart with one part `audio` named as the file, typed by its extension
 * (mediaTypeForAudioFile, :2828-2832); the answer's `text`.
 */
export async function dictate(
  relayUrl: string,
  token: string,
  file: string,
): Promise<{ ok: true; text: string } | { ok: false; status: number; error: string }> {
  let size: number;
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return { ok: false, status: 0, error: `${file} is not a file` };
    size = st.size;
  } catch (err) {
    return { ok: false, status: 0, error: (err as Error).message };
  }
  if (size === 0) return { ok: false, status: 0, error: `Audio file missing or empty: ${path.basename(file)}` };
  if (size > MAX_UPLOAD_BYTES) return { ok: false, status: 0, error: `${path.basename(file)} is larger than ${MAX_UPLOAD_BYTES} bytes` };
  const ext = path.extname(file).slice(1).toLowerCase();
  const type = ext === 'wav' || ext === 'wave' ? 'audio/wav' : ['m4a', 'mp4', 'aac'].includes(ext) ? 'audio/mp4' : 'application/octet-stream';
  const form = new FormData();
  form.append('audio', new Blob([fs.readFileSync(file)], { type }), path.basename(file));
  const res = await fetch(`${httpUrl(relayUrl)}/voice/transcribe`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    body: form,
  });
  const body = await readBounded(res, 1024 * 1024);
  if (!res.ok || body === null) return { ok: false, status: res.status, error: refusal(res.status, body) };
  try {
    const text: unknown = (JSON.parse(body.toString()) as Record<string, unknown>).text;
    return typeof text === 'string' && text ? { ok: true, text } : { ok: false, status: res.status, error: 'Transcription empty' };
  } catch {
    return { ok: false, status: res.status, error: 'Transcribe returned non-JSON' };
  }
}

/** The body, or null once it passes `max` (the rest is not read). */
async function readBounded(res: Response, max: number): Promise<Buffer | null> {
  if (!res.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(Buffer.from(value));
  }
}

/** describeHttpError's gist (RelayVoiceClient.kt:2657-2674): the status and the first line of what the relay said. */
function refusal(status: number, body: Buffer | null): string {
  if (body === null) return `HTTP ${status}: the answer was larger than the simulator reads`;
  let text = body.subarray(0, 2000).toString();
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    if (typeof j.error === 'string') text = typeof j.code === 'string' ? `${j.error} (${j.code})` : j.error;
  } catch {
    // plain text: the relay's answer to `Accept: audio/mpeg`
  }
  return `HTTP ${status}: ${printable(text.split('\n')[0] ?? '', 300)}`;
}
