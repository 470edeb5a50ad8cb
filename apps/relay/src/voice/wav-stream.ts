import { WavError } from './wav';

/** More audio than the recognizer may be given (RELAY_VOICE_STT_MAX_SECONDS). */
export class AudioTooLong extends Error {}

type Fmt = { format: number; channels: number; rate: number; bits: number };

const OUT_RATE = 16_000;
/** fmt is 16-40 bytes; anything much larger is not a WAV header worth holding. */
const MAX_FMT_BYTES = 1024;

/**
 * RIFF/WAVE read as it arrives (an upload in slices, or a decoder's stdout) into 16 kHz mono 16-bit
 * little-endian PCM, the raw input pocketsphinx reads, without ever holding the whole: the header is
 * parsed piece by piece, other chunks are skipped by count, and past `maxSeconds` of input it throws
 * AudioTooLong. The same mixing and resampling as `wav.ts`, streamed.
 */
export class WavTo16k {
  private state: 'riff' | 'header' | 'fmt' | 'skip' | 'data' | 'done' = 'riff';
  private part = Buffer.alloc(0);
  private need = 12;
  private skipLeft = 0;
  private dataLeft = 0;
  private fmt: Fmt | null = null;
  private carry = Buffer.alloc(0);
  private frames = 0;
  private maxFrames = 0;
  private resampler: Resampler | null = null;

  constructor(private readonly maxSeconds: number) {}

  /** Seconds of input read so far. */
  get seconds(): number {
    return this.fmt ? this.frames / this.fmt.rate : 0;
  }

  push(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let off = 0;
    while (off < chunk.length && this.state !== 'done') {
      if (this.state === 'skip') {
        const n = Math.min(this.skipLeft, chunk.length - off);
        off += n;
        this.skipLeft -= n;
        if (this.skipLeft === 0) this.expect('header', 8);
      } else if (this.state === 'data') {
        const n = Math.min(this.dataLeft, chunk.length - off);
        out.push(this.samples(chunk.subarray(off, off + n)));
        off += n;
        this.dataLeft -= n;
        if (this.dataLeft === 0) this.state = 'done';
      } else {
        const n = Math.min(this.need - this.part.length, chunk.length - off);
        this.part = Buffer.concat([this.part, chunk.subarray(off, off + n)]);
        off += n;
        if (this.part.length === this.need) this.parsePart(this.part);
      }
    }
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }

  /** The tail of the resampler; throws when the input never reached its samples. */
  end(): Buffer {
    if (!this.resampler) throw new WavError(this.state === 'riff' ? 'not a RIFF/WAVE file' : 'no data chunk');
    return toInt16(this.resampler.end());
  }

  private expect(state: 'header' | 'fmt', bytes: number): void {
    this.state = state;
    this.need = bytes;
    this.part = Buffer.alloc(0);
  }

  private parsePart(b: Buffer): void {
    if (this.state === 'riff') {
      if (b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE') throw new WavError('not a RIFF/WAVE file');
      return this.expect('header', 8);
    }
    if (this.state === 'fmt') {
      this.fmt = checkFmt(b);
      if (b.length % 2 === 0) return this.expect('header', 8);
      this.state = 'skip';
      this.skipLeft = 1;
      return;
    }
    const id = b.toString('latin1', 0, 4);
    const size = b.readUInt32LE(4);
    if (id === 'fmt ') {
      if (size < 16 || size > MAX_FMT_BYTES) throw new WavError('bad fmt chunk');
      return this.expect('fmt', size);
    }
    if (id === 'data') {
      if (!this.fmt) throw new WavError('data before fmt');
      this.state = 'data';
      // A streaming writer leaves the size at 0 or near 4 GiB: take what comes.
      this.dataLeft = size === 0 || size >= 0x7fff0000 ? Infinity : size;
      this.maxFrames = Math.ceil((this.maxSeconds + 0.25) * this.fmt.rate);
      this.resampler = new Resampler(this.fmt.rate / OUT_RATE);
      return;
    }
    this.state = 'skip';
    this.skipLeft = size + (size % 2);
    if (this.skipLeft === 0) this.expect('header', 8);
  }

  private samples(data: Buffer): Buffer {
    const f = this.fmt!;
    const bytes = f.bits / 8;
    const block = bytes * f.channels;
    const buf = this.carry.length > 0 ? Buffer.concat([this.carry, data]) : data;
    const frames = Math.floor(buf.length / block);
    this.carry = Buffer.from(buf.subarray(frames * block));
    this.frames += frames;
    if (this.frames > this.maxFrames) throw new AudioTooLong(`longer than ${this.maxSeconds} s`);
    const mono = new Float32Array(frames);
    const isFloat = f.format === 3;
    for (let i = 0; i < frames; i++) {
      let sum = 0;
      for (let c = 0; c < f.channels; c++) {
        const o = i * block + c * bytes;
        if (isFloat) sum += buf.readFloatLE(o);
        else if (f.bits === 8) sum += (buf[o] - 128) / 128;
        else if (f.bits === 16) sum += buf.readInt16LE(o) / 32768;
        else if (f.bits === 24) sum += buf.readIntLE(o, 3) / 8388608;
        else sum += buf.readInt32LE(o) / 2147483648;
      }
      mono[i] = sum / f.channels;
    }
    return toInt16(this.resampler!.push(mono));
  }
}

function checkFmt(b: Buffer): Fmt {
  let format = b.readUInt16LE(0);
  if (format === 0xfffe && b.length >= 40) format = b.readUInt16LE(24); // WAVE_FORMAT_EXTENSIBLE: the sub-format
  const f = { format, channels: b.readUInt16LE(2), rate: b.readUInt32LE(4), bits: b.readUInt16LE(14) };
  if (f.channels < 1 || f.channels > 16) throw new WavError(`${f.channels} channels`);
  if (f.rate < 4000 || f.rate > 384_000) throw new WavError(`sample rate ${f.rate}`);
  if (!(f.format === 1 && [8, 16, 24, 32].includes(f.bits)) && !(f.format === 3 && f.bits === 32))
    throw new WavError(`WAV format ${f.format} at ${f.bits} bits (PCM integer or 32-bit float only)`);
  return f;
}

function toInt16(s: Float32Array): Buffer {
  const out = Buffer.alloc(s.length * 2);
  for (let i = 0; i < s.length; i++) out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(s[i] * 32767))), i * 2);
  return out;
}

/**
 * `wav.ts`'s `resample` as a stream: a moving box filter of width round(ratio) when downsampling, then
 * linear interpolation at k * ratio, each output emitted as soon as both its neighbours have arrived.
 */
class Resampler {
  private readonly width: number;
  private readonly ring: Float32Array;
  private acc = 0;
  private n = 0;
  private prev = 0;
  private k = 0;

  constructor(private readonly ratio: number) {
    this.width = ratio > 1 ? Math.max(1, Math.round(ratio)) : 1;
    this.ring = new Float32Array(this.width);
  }

  push(x: Float32Array): Float32Array {
    const out = new Float32Array(Math.ceil(x.length / this.ratio) + 2);
    let m = 0;
    for (let i = 0; i < x.length; i++) {
      const slot = this.n % this.width;
      if (this.n >= this.width) this.acc -= this.ring[slot];
      this.ring[slot] = x[i];
      this.acc += x[i];
      const s = this.width === 1 ? x[i] : this.acc / Math.min(this.n + 1, this.width);
      // outputs whose left neighbour is the previous input
      for (let pos = this.k * this.ratio; this.n > 0 && Math.floor(pos) === this.n - 1; pos = this.k * this.ratio) {
        const t = pos - (this.n - 1);
        out[m++] = this.prev * (1 - t) + s * t;
        this.k++;
      }
      this.prev = s;
      this.n++;
    }
    return out.subarray(0, m);
  }

  /** Outputs past the last input take its value (as `resample` clamps its right neighbour). */
  end(): Float32Array {
    const total = Math.floor(this.n / this.ratio);
    const out = new Float32Array(Math.max(0, total - this.k)).fill(this.prev);
    this.k = total;
    return out;
  }
}
