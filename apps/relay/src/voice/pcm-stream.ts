import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { VoiceConfig } from '../common/config';
import { findProgram } from './run-tool';
import { VoiceProviderError } from './voice-provider';

/** Speech as it is produced: 16-bit little-endian mono PCM at `sampleRate`, and a way to stop it. */
export type PcmStream = { sampleRate: number; chunks: AsyncIterable<Buffer>; stop(): void };

const VOICE_RE = /^[a-z]{2,3}(-[a-z0-9]{2,8})?(\+[a-z0-9]{1,16})?$/i;

/**
 * espeak-ng writing WAV to stdout as it speaks: the header is read for the rate, the rest is passed on
 * as it arrives. The process is killed by `stop()` or after `timeoutMs`.
 */
export function offlinePcm(cfg: VoiceConfig, text: string, voice: string | null): PcmStream {
  const bin = findProgram('espeak-ng', cfg.offlineBinDir);
  if (!bin)
    throw new VoiceProviderError(
      'voice.provider_unavailable',
      'the offline provider needs espeak-ng (Debian: apt-get install espeak-ng)',
      'unavailable',
    );
  const v = voice ?? 'en-us';
  if (!VOICE_RE.test(v)) throw new VoiceProviderError('validation_failed', `voice "${v.slice(0, 40)}" is not an espeak-ng voice name`, 'invalid');
  const child = spawn(bin, ['-v', v, '--stdout'], { stdio: ['pipe', 'pipe', 'ignore'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  child.stdin.on('error', () => undefined);
  child.stdin.end(text);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, cfg.timeoutMs);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  child.on('close', () => clearTimeout(timer));
  child.on('error', () => undefined);
  let stopped = false;
  async function* chunks(): AsyncIterable<Buffer> {
    yield* skipWavHeader(child.stdout);
    const code = await exited;
    if (timedOut)
      throw new VoiceProviderError(
        'voice.provider_timeout',
        `espeak-ng took longer than ${Math.round(cfg.timeoutMs / 1000)} s and was stopped`,
        'timeout',
      );
    if (code !== 0 && !stopped) throw new VoiceProviderError('voice.synthesis_failed', `espeak-ng stopped mid-speech (exit ${code ?? 'by signal'})`);
  }
  return {
    sampleRate: 22050,
    chunks: chunks(),
    stop: () => {
      stopped = true;
      child.kill('SIGKILL');
    },
  };
}

/** Drops the 44-byte RIFF header espeak-ng writes first (its sizes are placeholders on a pipe). */
async function* skipWavHeader(out: Readable): AsyncIterable<Buffer> {
  let skip = 44;
  for await (const c of out as AsyncIterable<Buffer>) {
    if (skip > 0) {
      if (c.length <= skip) {
        skip -= c.length;
        continue;
      }
      const rest = c.subarray(skip);
      skip = 0;
      yield rest;
    } else yield c;
  }
}

/** The OpenAI-compatible `/audio/speech` with `response_format: pcm` (24 kHz 16-bit mono), read as it streams. */
export async function openaiPcm(cfg: VoiceConfig, text: string, voice: string | null, model: string | null): Promise<PcmStream> {
  if (!cfg.openaiKey)
    throw new VoiceProviderError(
      'voice.no_api_key',
      'no API key is available for the openai provider (set VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY)',
      'unavailable',
    );
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), cfg.timeoutMs);
  const res = await fetch(`${cfg.openaiBaseUrl}/audio/speech`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${cfg.openaiKey}` },
    body: JSON.stringify({ model: model ?? 'gpt-4o-mini-tts', voice: voice ?? 'alloy', input: text, response_format: 'pcm' }),
    signal: abort.signal,
  }).catch((e: Error) => {
    clearTimeout(timer);
    throw new VoiceProviderError('voice.provider_unreachable', `the openai provider could not be reached: ${e.message}`);
  });
  if (!res.ok || !res.body) {
    clearTimeout(timer);
    throw new VoiceProviderError('voice.provider_error', `the openai provider answered ${res.status}`);
  }
  const body = res.body;
  async function* chunks(): AsyncIterable<Buffer> {
    try {
      for await (const c of body as unknown as AsyncIterable<Uint8Array>) yield Buffer.from(c);
    } finally {
      clearTimeout(timer);
    }
  }
  return { sampleRate: 24000, chunks: chunks(), stop: () => abort.abort() };
}

/** Peak and RMS of a 16-bit PCM chunk, 0-1 (the app's level meter). */
export function pcmLevels(pcm: Buffer): { peak: number; rms: number } {
  let peak = 0;
  let sum = 0;
  const n = Math.floor(pcm.length / 2);
  for (let i = 0; i < n; i++) {
    const v = Math.abs(pcm.readInt16LE(i * 2)) / 32768;
    if (v > peak) peak = v;
    sum += v * v;
  }
  return { peak: Math.round(peak * 1000) / 1000, rms: n === 0 ? 0 : Math.round(Math.sqrt(sum / n) * 1000) / 1000 };
}

/** `metrics` is always an object, and holds no nulls (the app reads `first_audio_ms`, `response_done_ms` as numbers). */
export function metricsOf(s: { chunks: number; bytes: number }, firstAudioMs: number | null, started: number): Record<string, number> {
  const done = Math.round(performance.now() - started);
  return {
    chunks: s.chunks,
    bytes: s.bytes,
    ...(firstAudioMs === null ? {} : { first_audio_ms: Math.round(firstAudioMs) }),
    response_done_ms: done,
    total_ms: done,
  };
}
