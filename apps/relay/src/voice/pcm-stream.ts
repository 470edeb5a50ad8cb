import { resample, writeWav16 } from './wav';

/** Speech as it is produced: 16-bit little-endian mono PCM at `sampleRate`, and a way to stop it. */
export type PcmStream = { sampleRate: number; chunks: AsyncIterable<Buffer>; stop(): void };

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

/** 16-bit little-endian mono PCM from one rate to another (wav.ts's resampler). */
export function pcm16Resampled(pcm: Buffer, from: number, to: number): Buffer {
  const samples = new Float32Array(Math.floor(pcm.length / 2));
  for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2) / 32768;
  return writeWav16(resample({ sampleRate: from, samples }, to)).subarray(44);
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
