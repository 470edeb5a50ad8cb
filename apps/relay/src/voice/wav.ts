/**
 * Just enough RIFF/WAVE for relay voice: read PCM (8/16/24/32-bit integer, 32-bit float; any rate and
 * channel count), mix to mono, resample to the rate a recognizer wants, and write 16-bit PCM WAV.
 */
export type Pcm = { sampleRate: number; samples: Float32Array };

export class WavError extends Error {}

export function isWav(buf: Buffer): boolean {
  return buf.length >= 12 && buf.toString('latin1', 0, 4) === 'RIFF' && buf.toString('latin1', 8, 12) === 'WAVE';
}

export function readWav(buf: Buffer): Pcm {
  if (!isWav(buf)) throw new WavError('not a RIFF/WAVE file');
  let fmt: { format: number; channels: number; rate: number; bits: number } | null = null;
  let off = 12;
  while (off + 8 <= buf.length) {
    const id = buf.toString('latin1', off, off + 4);
    const size = buf.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > buf.length) throw new WavError('truncated fmt chunk');
      let format = buf.readUInt16LE(body);
      if (format === 0xfffe && size >= 40) format = buf.readUInt16LE(body + 24); // WAVE_FORMAT_EXTENSIBLE: the sub-format
      fmt = { format, channels: buf.readUInt16LE(body + 2), rate: buf.readUInt32LE(body + 4), bits: buf.readUInt16LE(body + 14) };
    } else if (id === 'data') {
      if (!fmt) throw new WavError('data before fmt');
      // A streaming writer may leave the size at 0 or 0xffffffff: take what the file holds.
      const end = size === 0 || size === 0xffffffff || body + size > buf.length ? buf.length : body + size;
      return decode(buf.subarray(body, end), fmt);
    }
    off = body + size + (size % 2);
  }
  throw new WavError('no data chunk');
}

function decode(data: Buffer, f: { format: number; channels: number; rate: number; bits: number }): Pcm {
  const { channels, rate, bits } = f;
  if (channels < 1 || channels > 16) throw new WavError(`${channels} channels`);
  if (rate < 4000 || rate > 384_000) throw new WavError(`sample rate ${rate}`);
  const bytes = bits / 8;
  const isFloat = f.format === 3;
  if (!(f.format === 1 && [8, 16, 24, 32].includes(bits)) && !(isFloat && bits === 32))
    throw new WavError(`WAV format ${f.format} at ${bits} bits (PCM integer or 32-bit float only)`);
  const frames = Math.floor(data.length / (bytes * channels));
  const out = new Float32Array(frames);
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) {
      const o = (i * channels + c) * bytes;
      let v: number;
      if (isFloat) v = data.readFloatLE(o);
      else if (bits === 8) v = (data[o] - 128) / 128;
      else if (bits === 16) v = data.readInt16LE(o) / 32768;
      else if (bits === 24) v = data.readIntLE(o, 3) / 8388608;
      else v = data.readInt32LE(o) / 2147483648;
      sum += v;
    }
    out[i] = sum / channels;
  }
  return { sampleRate: rate, samples: out };
}

/** Linear-interpolation resampling (with a box pre-filter when downsampling), enough for speech recognition. */
export function resample(pcm: Pcm, rate: number): Pcm {
  if (pcm.sampleRate === rate) return pcm;
  const ratio = pcm.sampleRate / rate;
  let src = pcm.samples;
  if (ratio > 1) {
    const w = Math.max(1, Math.round(ratio));
    const smoothed = new Float32Array(src.length);
    let acc = 0;
    for (let i = 0; i < src.length; i++) {
      acc += src[i];
      if (i >= w) acc -= src[i - w];
      smoothed[i] = acc / Math.min(i + 1, w);
    }
    src = smoothed;
  }
  const n = Math.floor(src.length / ratio);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const x = i * ratio;
    const j = Math.floor(x);
    const t = x - j;
    out[i] = src[j] * (1 - t) + (src[Math.min(j + 1, src.length - 1)] ?? 0) * t;
  }
  return { sampleRate: rate, samples: out };
}

export function writeWav16(pcm: Pcm): Buffer {
  const n = pcm.samples.length;
  const buf = Buffer.alloc(44 + n * 2);
  buf.write('RIFF', 0, 'latin1');
  buf.writeUInt32LE(36 + n * 2, 4);
  buf.write('WAVE', 8, 'latin1');
  buf.write('fmt ', 12, 'latin1');
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20);
  buf.writeUInt16LE(1, 22);
  buf.writeUInt32LE(pcm.sampleRate, 24);
  buf.writeUInt32LE(pcm.sampleRate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36, 'latin1');
  buf.writeUInt32LE(n * 2, 40);
  for (let i = 0; i < n; i++) buf.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(pcm.samples[i] * 32767))), 44 + i * 2);
  return buf;
}

export const durationMs = (pcm: Pcm): number => Math.round((pcm.samples.length / pcm.sampleRate) * 1000);
