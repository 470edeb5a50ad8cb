import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { VoiceConfig } from '../common/config';
import { findProgram, runTool, ToolTimeoutError } from './run-tool';
import {
  VoiceProviderError,
  type ProviderOptions,
  type Synthesis,
  type SynthesisRequest,
  type Transcription,
  type TranscriptionRequest,
  type VoiceProvider,
} from './voice-provider';
import { durationMs, isWav, readWav, resample, WavError, writeWav16 } from './wav';

/** espeak-ng voices offered by name (any installed espeak-ng voice is accepted). */
const VOICES = [
  { id: 'en-us', label: 'English (US)' },
  { id: 'en-gb', label: 'English (UK)' },
  { id: 'en-us+f3', label: 'English (US), female' },
  { id: 'en-gb+m3', label: 'English (UK), male' },
  { id: 'de', label: 'German' },
  { id: 'fr', label: 'French' },
  { id: 'es', label: 'Spanish' },
];
const VOICE_RE = /^[a-z]{2,3}(-[a-z0-9]{2,8})?(\+[a-z0-9]{1,16})?$/i;

/**
 * The default provider when no cloud key is set: speech from Debian's `espeak-ng` (encoded to MP3 by
 * `lame`), text from `pocketsphinx_continuous` with its English model. Works with no network. Each call
 * is a child process with a time bound (RELAY_VOICE_TIMEOUT_SECONDS) and an output bound.
 */
export class OfflineVoiceProvider implements VoiceProvider {
  readonly id = 'offline';
  readonly label = 'Offline (espeak-ng + pocketsphinx, on this host)';

  constructor(private readonly cfg: VoiceConfig) {}

  private bin(name: string): string | null {
    return findProgram(name, this.cfg.offlineBinDir);
  }

  unavailable(): string | null {
    const missing = ['espeak-ng', 'lame'].filter((n) => !this.bin(n));
    return missing.length > 0 ? `the offline provider needs ${missing.join(' and ')} (Debian: apt-get install espeak-ng lame)` : null;
  }

  /** What speech to text needs, separately: pocketsphinx and its model. */
  sttUnavailable(): string | null {
    if (!this.bin('pocketsphinx_continuous'))
      return 'offline speech to text needs pocketsphinx (Debian: apt-get install pocketsphinx pocketsphinx-en-us)';
    if (!fs.existsSync(path.join(this.cfg.sphinxModelDir, 'en-us')))
      return `pocketsphinx's model is missing at ${this.cfg.sphinxModelDir} (Debian: apt-get install pocketsphinx-en-us)`;
    return null;
  }

  async synthesize(req: SynthesisRequest): Promise<Synthesis> {
    const why = this.unavailable();
    if (why) throw new VoiceProviderError('voice.provider_unavailable', why, 'unavailable');
    const voice = req.voice ?? 'en-us';
    if (!VOICE_RE.test(voice))
      throw new VoiceProviderError(
        'validation_failed',
        `voice "${voice.slice(0, 40)}" is not an espeak-ng voice name (like en-us or en-gb+f3)`,
        'invalid',
      );
    const wpm = Math.round(170 * Math.min(2, Math.max(0.5, req.speed ?? 1)));
    // Text goes in on stdin (never as an argument: no length limit, nothing in `ps`).
    const wav = await runTool(this.bin('espeak-ng')!, ['-v', voice, '-s', String(wpm), '--stdout'], {
      input: req.text,
      timeoutMs: this.cfg.timeoutMs,
      maxStdout: 64 * 1024 * 1024,
    }).catch((e: Error) => {
      throw failed('voice.synthesis_failed', 'espeak-ng', e);
    });
    const mp3 = await runTool(this.bin('lame')!, ['--quiet', '-b', '64', '-', '-'], {
      input: wav.stdout,
      timeoutMs: this.cfg.timeoutMs,
      maxStdout: 16 * 1024 * 1024,
    }).catch((e: Error) => {
      throw failed('voice.synthesis_failed', 'lame', e);
    });
    return { audio: mp3.stdout, contentType: 'audio/mpeg' };
  }

  /** Raw speech as WAV (16-bit mono, espeak-ng's 22,050 Hz) for the streaming output session. */
  async synthesizeWav(text: string, voice: string | null): Promise<Buffer> {
    const why = this.unavailable();
    if (why) throw new VoiceProviderError('voice.provider_unavailable', why, 'unavailable');
    const v = voice ?? 'en-us';
    if (!VOICE_RE.test(v)) throw new VoiceProviderError('validation_failed', `voice "${v.slice(0, 40)}" is not an espeak-ng voice name`, 'invalid');
    const r = await runTool(this.bin('espeak-ng')!, ['-v', v, '--stdout'], {
      input: text,
      timeoutMs: this.cfg.timeoutMs,
      maxStdout: 64 * 1024 * 1024,
    });
    return r.stdout;
  }

  async transcribe(req: TranscriptionRequest): Promise<Transcription> {
    const why = this.sttUnavailable();
    if (why) throw new VoiceProviderError('voice.provider_unavailable', why, 'unavailable');
    let wav = req.audio;
    if (!isWav(wav)) {
      if (isMp3(wav) && this.bin('lame')) {
        wav = (
          await runTool(this.bin('lame')!, ['--quiet', '--decode', '--mp3input', '-', '-'], {
            input: wav,
            timeoutMs: this.cfg.timeoutMs,
            maxStdout: 256 * 1024 * 1024,
          }).catch((e: Error) => {
            throw new VoiceProviderError('voice.bad_audio', `the MP3 could not be decoded: ${e.message}`, 'invalid');
          })
        ).stdout;
      } else if (this.bin('ffmpeg')) wav = await this.decodeWithFfmpeg(wav);
      else
        throw new VoiceProviderError(
          'voice.unsupported_audio',
          `the offline provider reads WAV (PCM) or MP3 audio, and other formats with ffmpeg, which is not installed; this upload is ${req.contentType || 'of an unknown type'}. Install ffmpeg (apt-get install ffmpeg), record WAV, or configure a cloud provider (stt.provider: openai and an API key)`,
          'unsupported',
        );
    }
    let pcm;
    try {
      pcm = resample(readWav(wav), 16_000);
    } catch (e) {
      if (e instanceof WavError) throw new VoiceProviderError('voice.bad_audio', `the WAV could not be read: ${e.message}`, 'invalid');
      throw e;
    }
    const model = this.cfg.sphinxModelDir;
    // pocketsphinx opens its input by name (a Node stdin is a socket it cannot open): a private temp file.
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'svc-stt-'));
    const input = path.join(dir, 'audio.wav');
    let r;
    try {
      await fs.promises.writeFile(input, writeWav16(pcm), { mode: 0o600 });
      const args = [
        '-infile',
        input,
        '-hmm',
        path.join(model, 'en-us'),
        '-lm',
        path.join(model, 'en-us.lm.bin'),
        '-dict',
        path.join(model, 'cmudict-en-us.dict'),
      ];
      r = await runTool(this.bin('pocketsphinx_continuous')!, args, { timeoutMs: this.cfg.timeoutMs, maxStdout: 1024 * 1024 }).catch((e: Error) => {
        throw failed('voice.transcription_failed', 'pocketsphinx', e);
      });
    } finally {
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
    const text = r.stdout
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .join(' ');
    return { text, audioMs: durationMs(pcm) };
  }

  /**
   * Any other container/codec (the app's `.m4a` AAC, a browser's `audio/webm` Opus, Ogg, FLAC...) through
   * ffmpeg when it is installed: from a private temp file (MP4 may keep its index at the end, so the input
   * must be seekable) to 16 kHz mono WAV on stdout. Not audio ffmpeg knows: 415.
   */
  private async decodeWithFfmpeg(audio: Buffer): Promise<Buffer> {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'svc-stt-'));
    const input = path.join(dir, 'upload');
    try {
      await fs.promises.writeFile(input, audio, { mode: 0o600 });
      const r = await runTool(
        this.bin('ffmpeg')!,
        ['-nostdin', '-hide_banner', '-loglevel', 'error', '-i', input, '-vn', '-ac', '1', '-ar', '16000', '-f', 'wav', 'pipe:1'],
        {
          timeoutMs: this.cfg.timeoutMs,
          maxStdout: 256 * 1024 * 1024,
        },
      );
      return r.stdout;
    } catch (e) {
      throw new VoiceProviderError(
        'voice.unsupported_audio',
        `ffmpeg could not decode the upload as audio: ${(e as Error).message.slice(0, 200)}`,
        'unsupported',
      );
    } finally {
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  }

  async options(): Promise<ProviderOptions> {
    return {
      provider: this.id,
      label: this.label,
      models: ['espeak-ng'],
      voices: VOICES,
      languages: ['en', 'de', 'fr', 'es'],
      sample_rates: [22050],
      source: 'static',
    };
  }
}

function isMp3(b: Buffer): boolean {
  return (b.length > 3 && b.toString('latin1', 0, 3) === 'ID3') || (b.length > 2 && b[0] === 0xff && (b[1] & 0xe0) === 0xe0);
}

/** A program's failure as the caller sees it: past its time bound 504 `voice.provider_timeout`, else 502. */
function failed(code: string, program: string, e: Error): VoiceProviderError {
  if (e instanceof ToolTimeoutError) return new VoiceProviderError('voice.provider_timeout', `${program}: ${e.message}`, 'timeout');
  return new VoiceProviderError(code, `${program}: ${e.message}`);
}
