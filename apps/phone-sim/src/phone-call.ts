import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import WebSocket from 'ws';
import { isObject, printable } from './frames';
import { httpUrl } from './urls';

/*
 * A voice-mode call as the app places one: RelayVoiceClient.runRealtimeAgent (network/relay/RelayVoiceClient.kt,
 * RVC below; paths under app/src/main/kotlin/com/hermesandroid/relay/ of the reference checkout), one turn, not the
 * persistent session. In order:
 *  1. `POST /voice/realtime-agent/session` with the bearer, body `{}` when no profile or override is chosen
 *     (createRealtimeAgentSession, RVC:2700-2790); the answer's `websocket_path` (RVC:3355-3368);
 *  2. the socket at the relay's origin + `websocket_path`, `Authorization: Bearer` (openSocket, RVC:1652-1680);
 *  3. on open `{"type":"session.start"}`, then the mic's 16 kHz 16-bit PCM as `input_audio.append {chunk_id (1..),
 *     sample_rate, audio_base64}` in 6400-byte chunks, then `{"type":"input_audio.commit"}` (RVC:118, 1491-1505,
 *     1600-1617, 1747-1750);
 *  4. every frame acked with `client.ack {event_id?, audio_event_id?, input_chunk_id?}` (no played id here: the app
 *     reports playback separately) (RVC:1785-1880, 2844-2860);
 *  5. `voice.response.done` ends the call with close 1000 "done"; `voice.error` (unless a transient provider notice)
 *     and `voice.session.resume_failed` with close 1011 "provider error" (RVC:1877-1942).
 * Every frame is read as a hostile peer's: one JSON object with a string `type`, at most MAX_FRAME_BYTES; what is
 * printed is escaped and cut; the audio is counted, not kept.
 */

/** RVC:118 REALTIME_INPUT_CHUNK_BYTES. */
const CHUNK_BYTES = 6400;
/** The app records at 16 kHz (VoiceViewModel.kt:3524-3527, inputSampleRate). */
export const CALL_RATE = 16_000;
/** The most input audio the simulator sends (the relay takes 16 MiB a session; 60 s at 16 kHz is under 2 MiB). */
const MAX_INPUT_BYTES = 4 * 1024 * 1024;
/** The largest WAV file it reads. */
const MAX_WAV_BYTES = 32 * 1024 * 1024;
/** The largest frame it takes from the relay (the `ws` client closes 1009 past it). */
const MAX_FRAME_BYTES = 4 * 1024 * 1024;
/** The most of the transcript and the reply kept (characters). */
const MAX_TEXT = 4000;
/** A call that has not ended by then is closed (the app bounds a turn at 5 min, REALTIME_AGENT_MAX_TURN_MS, RVC:115). */
const CALL_TIMEOUT_MS = 120_000;
/** RVC:131-144 isTransientRealtimeProviderError: provider notices that must not end a live turn. */
const transient = (msg: string) => {
  const m = msg.toLowerCase();
  return (
    m.includes('no active response') ||
    m.includes('cancellation failed') ||
    (m.includes('timed out') && m.includes('inactivity')) ||
    m.includes('voice session expired after a long silence')
  );
};

export type CallResult = {
  ok: boolean;
  sessionId: string | null;
  heard: string;
  reply: string;
  audioChunks: number;
  audioBytes: number;
  error: string | null;
};

/** 16 kHz mono 16-bit PCM from a RIFF/WAVE file of PCM16 (any rate, any channel count), or an error. */
export function pcmFromWav(wav: Buffer): { pcm: Buffer } | { error: string } {
  if (wav.length < 12 || wav.toString('latin1', 0, 4) !== 'RIFF' || wav.toString('latin1', 8, 12) !== 'WAVE') return { error: 'not a WAV file' };
  let fmt: { channels: number; rate: number; bits: number; format: number } | null = null;
  for (let at = 12; at + 8 <= wav.length;) {
    const id = wav.toString('latin1', at, at + 4);
    // espeak-ng --stdout writes 0x7fffffff sizes (it cannot seek): the data runs to the end.
    const size = Math.min(wav.readUInt32LE(at + 4), wav.length - at - 8);
    const body = wav.subarray(at + 8, at + 8 + size);
    if (id === 'fmt ' && size >= 16)
      fmt = { format: body.readUInt16LE(0), channels: body.readUInt16LE(2), rate: body.readUInt32LE(4), bits: body.readUInt16LE(14) };
    if (id === 'data') {
      if (!fmt || fmt.format !== 1 || fmt.bits !== 16 || fmt.channels < 1 || fmt.rate < 4000 || fmt.rate > 192_000)
        return { error: 'the WAV must be 16-bit PCM' };
      return { pcm: resampled(body, fmt.channels, fmt.rate) };
    }
    at += 8 + size + (size % 2);
  }
  return { error: 'the WAV has no data chunk' };
}

/** Mono at CALL_RATE by linear interpolation (the relay resamples the same way for its providers). */
function resampled(data: Buffer, channels: number, rate: number): Buffer {
  const frames = Math.floor(data.length / (2 * channels));
  const mono = new Float64Array(frames);
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += data.readInt16LE((i * channels + c) * 2);
    mono[i] = sum / channels;
  }
  const n = Math.min(Math.floor((frames * CALL_RATE) / rate), MAX_INPUT_BYTES / 2);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) {
    const x = (i * rate) / CALL_RATE;
    const j = Math.floor(x);
    const a = mono[j] ?? 0;
    const b = mono[j + 1] ?? a;
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(a + (b - a) * (x - j)))), i * 2);
  }
  return out;
}

/** TEXT spoken by espeak-ng (as the relay's offline provider speaks), as the call's PCM. */
export function spokenPcm(text: string): Promise<{ pcm: Buffer } | { error: string }> {
  if (!text.trim()) return Promise.resolve({ error: 'call: nothing to say' });
  return new Promise((resolve) =>
    execFile(
      'espeak-ng',
      ['-v', 'en-us', '--stdout', '--', text.slice(0, 2000)],
      { encoding: 'buffer', maxBuffer: MAX_WAV_BYTES, timeout: 30_000 },
      (err, out) => resolve(err ? { error: `espeak-ng: ${printable(err.message, 200)}` } : pcmFromWav(out)),
    ),
  );
}

/** A WAV file's PCM, the file bounded before it is read. */
export function wavFilePcm(file: string): { pcm: Buffer } | { error: string } {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return { error: `${file} is not a file` };
    if (st.size > MAX_WAV_BYTES) return { error: `${file} is larger than ${MAX_WAV_BYTES} bytes` };
    return pcmFromWav(fs.readFileSync(file));
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** One call: creates the session, streams `pcm`, prints what comes back through `say`, ends it. */
export async function voiceCall(relayUrl: string, token: string, pcm: Buffer, say: (line: string) => void): Promise<CallResult> {
  const r: CallResult = { ok: false, sessionId: null, heard: '', reply: '', audioChunks: 0, audioBytes: 0, error: null };
  const fail = (error: string) => ((r.error = error), r);
  if (pcm.length < 2) return fail('no audio to send');
  const origin = httpUrl(relayUrl);
  let res: Response;
  try {
    res = await fetch(`${origin}/voice/realtime-agent/session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json; charset=utf-8' },
      body: '{}',
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    return fail(`Realtime agent session failed: ${(err as Error).message}`);
  }
  const text = (await res.text().catch(() => '')).slice(0, 64 * 1024);
  if (!res.ok) return fail(`HTTP ${res.status}: ${printable(text.split('\n')[0] ?? '', 300)}`);
  let session: unknown;
  try {
    session = JSON.parse(text);
  } catch {
    return fail('the session answer is not JSON');
  }
  const path = isObject(session) ? session.websocket_path : undefined;
  const id = isObject(session) ? session.session_id : undefined;
  // Only a path on the relay's own origin: no scheme, no host, no `..`.
  if (typeof path !== 'string' || !/^\/[A-Za-z0-9_\-/.]{1,200}$/.test(path) || path.includes('..') || path.startsWith('//'))
    return fail('the session answer has no usable websocket_path');
  r.sessionId = typeof id === 'string' ? printable(id, 80) : null;
  say(`call: session ${r.sessionId ?? '?'} (realtime agent), streaming ${pcm.length} bytes of ${CALL_RATE} Hz audio`);

  const ws = new WebSocket(`${origin.replace(/^http/, 'ws')}${path}`, { headers: { authorization: `Bearer ${token}` }, maxPayload: MAX_FRAME_BYTES });
  return new Promise<CallResult>((resolve) => {
    let settled = false;
    const end = (code: number, reason: string, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      r.ok = error === null;
      r.error = error;
      if (ws.readyState === WebSocket.OPEN) ws.close(code, reason);
      else ws.terminate();
      resolve(r);
    };
    const timer = setTimeout(() => end(1000, 'timeout', `no voice.response.done within ${CALL_TIMEOUT_MS / 1000} s`), CALL_TIMEOUT_MS);
    ws.on('unexpected-response', (_req, resp) => end(1000, '', `socket upgrade refused: ${resp.statusCode ?? 0}`));
    ws.on('error', (err) => end(1000, '', `socket error: ${printable(err.message, 200)}`));
    ws.on('close', (code) => end(1000, '', `the relay closed the call (${code}) before voice.response.done`));
    ws.on('open', () => {
      ws.send('{"type":"session.start"}');
      let chunkId = 1;
      for (let off = 0; off < pcm.length; off += CHUNK_BYTES, chunkId++) {
        const audio = pcm.subarray(off, Math.min(off + CHUNK_BYTES, pcm.length)).toString('base64');
        ws.send(`{"type":"input_audio.append","chunk_id":${chunkId},"sample_rate":${CALL_RATE},"audio_base64":"${audio}"}`);
      }
      ws.send('{"type":"input_audio.commit"}');
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let f: unknown;
      try {
        f = JSON.parse(String(data));
      } catch {
        return say('call: dropped a frame that is not JSON');
      }
      if (!isObject(f) || typeof f.type !== 'string') return say('call: dropped a frame without a type');
      const type = f.type.slice(0, 80);
      const num = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);
      const ack = { event_id: num(f.event_id), audio_event_id: num(f.audio_event_id), input_chunk_id: num(f.input_chunk_id) };
      if (Object.values(ack).some((v) => v !== undefined) && ws.readyState === WebSocket.OPEN)
        ws.send(JSON.stringify({ type: 'client.ack', ...ack }));
      const str = (v: unknown) => (typeof v === 'string' ? v : '');
      if (type === 'voice.input_transcript.final' && !f.replayed) {
        r.heard = str(f.text).slice(0, MAX_TEXT);
        say(`call: the relay heard: ${printable(r.heard, 500)}`);
      } else if (type === 'voice.response.delta' && !f.replayed) {
        r.reply = (r.reply + str(f.delta)).slice(0, MAX_TEXT);
      } else if ((type === 'voice.audio.delta' || type === 'voice.output_audio.delta') && !f.replayed) {
        r.audioChunks++;
        const b64 = str(f.audio_base64);
        r.audioBytes += num(f.byte_count) ?? Math.floor((b64.length * 3) / 4);
      } else if (/^(hermes|svc)\.tool\./.test(type) && !f.replayed) {
        // The app matches `hermes.tool.*` (VoiceViewModel.kt 3623-3900); a relay in the spec's spelling writes `svc.`.
        say(`call: ${type.slice(type.indexOf('.') + 1)} ${printable(str(f.tool_name) || str(f.name), 80)}`);
      } else if (type === 'voice.response.done') {
        say(`call: the agent replied: ${printable(r.reply, 500)}`);
        say(`call: ${r.audioBytes} bytes of audio in ${r.audioChunks} chunk(s)`);
        end(1000, 'done', null);
      } else if (type === 'voice.session.resume_failed' || type === 'voice.error') {
        const msg = str(f.message) || str(f.error) || str(f.reason) || 'Realtime agent error';
        if (type === 'voice.error' && transient(msg)) return;
        end(1011, 'provider error', printable(msg, 300));
      }
    });
  });
}
