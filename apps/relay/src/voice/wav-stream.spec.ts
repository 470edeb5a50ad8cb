import { execFileSync } from 'node:child_process';
import { readWav, resample, writeWav16, type Pcm } from './wav';
import { AudioTooLong, WavTo16k } from './wav-stream';

function streamed(wav: Buffer, slice: number, maxSeconds = 120): Buffer {
  const c = new WavTo16k(maxSeconds);
  const parts: Buffer[] = [];
  for (let o = 0; o < wav.length; o += slice) parts.push(c.push(wav.subarray(o, o + slice)));
  parts.push(c.end());
  return Buffer.concat(parts);
}

const whole = (wav: Buffer) => writeWav16(resample(readWav(wav), 16_000)).subarray(44);

function tone(rate: number, channels: number, seconds: number): Buffer {
  const n = Math.round(rate * seconds);
  const samples = new Float32Array(n);
  for (let i = 0; i < n; i++) samples[i] = 0.5 * Math.sin((2 * Math.PI * 440 * i) / rate) + 0.2 * Math.sin((2 * Math.PI * 3100 * i) / rate);
  const mono = writeWav16({ sampleRate: rate, samples } satisfies Pcm);
  if (channels === 1) return mono;
  const data = mono.subarray(44);
  const out = Buffer.alloc(44 + data.length * channels);
  mono.copy(out, 0, 0, 44);
  out.writeUInt32LE(36 + data.length * channels, 4);
  out.writeUInt16LE(channels, 22);
  out.writeUInt32LE(rate * 2 * channels, 28);
  out.writeUInt16LE(2 * channels, 32);
  out.writeUInt32LE(data.length * channels, 40);
  for (let i = 0; i < data.length / 2; i++) for (let c = 0; c < channels; c++) data.copy(out, 44 + (i * channels + c) * 2, i * 2, i * 2 + 2);
  return out;
}

describe('WavTo16k: wav.ts resampling, streamed', () => {
  it.each([
    ['espeak-ng speech, 22,050 Hz', () => execFileSync('espeak-ng', ['-v', 'en-us', '--stdout', 'hello world'])],
    ['16 kHz mono (no resampling)', () => tone(16_000, 1, 1)],
    ['44.1 kHz stereo', () => tone(44_100, 2, 1)],
    ['8 kHz (upsampling)', () => tone(8_000, 1, 1)],
    ['48 kHz', () => tone(48_000, 1, 0.7)],
  ])('gives what readWav + resample give, whatever the slices: %s', (_name, make) => {
    const wav = make();
    const expected = whole(wav);
    for (const slice of [1, 7, 4096, 65_536, wav.length]) expect(streamed(wav, slice).equals(expected)).toBe(true);
  });

  it('skips chunks it does not need and takes what a streaming writer sends after a placeholder size', () => {
    const wav = tone(22_050, 1, 0.5);
    const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([5, 0, 0, 0]), Buffer.from('abcde\0')]);
    const withList = Buffer.concat([wav.subarray(0, 36), list, wav.subarray(36)]);
    expect(streamed(withList, 3).equals(whole(wav))).toBe(true);
    const open = Buffer.from(wav);
    open.writeUInt32LE(0x7fffffff, 40);
    expect(streamed(open, 1000).equals(whole(wav))).toBe(true);
  });

  it('stops past the bound (AudioTooLong), before converting the rest', () => {
    const wav = tone(8_000, 1, 3);
    expect(() => streamed(wav, 4096, 2)).toThrow(AudioTooLong);
    expect(streamed(wav, 4096, 3).length).toBe(3 * 16_000 * 2);
  });

  it('refuses what is not PCM WAV', () => {
    expect(() => streamed(Buffer.from('RIFF\0\0\0\0WAVEdata\0\0\0\0'), 64)).toThrow('data before fmt');
    expect(() => streamed(Buffer.from('not a wav at all'), 64)).toThrow('not a RIFF/WAVE file');
    const alaw = tone(8_000, 1, 0.1);
    alaw.writeUInt16LE(6, 20);
    expect(() => streamed(alaw, 64)).toThrow('WAV format 6');
  });
});
