import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DomainError } from '@svc/domain';
import type { Logger } from 'pino';
import type { VoiceConfig } from '../common/config/relay-config';
import type { VoiceSection } from '@svc/events';
import { FFMPEG_DEMUXER, KNOWN_AUDIO, sniffAudio, type AudioContainer } from './audio-sniff';
import { ESPEAK_VOICES, espeakPcm, isEspeakVoice } from './espeak';
import { EspeakLanguages, espeakVoiceFor } from './espeak-languages';
import type { PcmStream } from './pcm-stream';
import { findProgram, runTool, ToolTimeoutError } from './run-tool';
import { SpeechAborted, SpeechGate, SpeechGateBusy } from './speech-gate';
import type { SpeechLanguage } from './speech-language';
import { SpeechFailed, SpeechTimeout, startSpeech } from './speech-process';
import {
  VoiceProviderError,
  type ProviderCapabilities,
  type ProviderDefaults,
  type ProviderOptions,
  type Synthesis,
  type SynthesisRequest,
  type Transcription,
  type TranscriptionRequest,
  type VoiceProvider,
} from './voice-provider';
import { WavError, writeWav16 } from './wav';
import { AudioTooLong, WavTo16k } from './wav-stream';

const UNDECODABLE = 'ffmpeg could not decode the audio (unsupported or damaged format)';
/** What a refused caller is told to wait (Retry-After): about one short transcription. */
const BUSY_RETRY_AFTER_SECONDS = 5;
/** The WAV fallback converts this much upload between turns of the event loop. */
const SLICE_BYTES = 64 * 1024;
const MAX_TRANSCRIPT_BYTES = 1024 * 1024;
const WAV_HEADER_BYTES = 44;

/**
 * The default provider when no cloud key is set: speech from Debian's `espeak-ng` (encoded to MP3 by
 * `lame`), text from `pocketsphinx_continuous` with its English model. Works with no network. Each call
 * is a child process with a time bound (RELAY_VOICE_TIMEOUT_SECONDS) and an output bound.
 */
export class OfflineVoiceProvider implements VoiceProvider {
  readonly id = 'offline';
  readonly label = 'Offline (espeak-ng + pocketsphinx, on this host)';
  readonly aliases = ['offline', 'local', 'espeak', 'espeak-ng', 'espeak_ng', 'pocketsphinx'];
  readonly realtime = false;
  readonly discoversOptions = false;
  // espeak-ng speaks, pocketsphinx transcribes; a realtime session takes typed text (its mic audio is
  // acknowledged, not heard); the realtime agent runs the fallback engine. response.cancel stops speech.
  readonly capabilities: ProviderCapabilities = {
    supports_tts: true,
    supports_stt: true,
    supports_speech_to_speech: false,
    supports_tool_use: false,
    supports_realtime: true,
    supports_realtime_agent_native: false,
    supports_interruption: true,
    supports_expression: false,
  };

  private readonly gate: SpeechGate;
  /** The languages the installed espeak-ng speaks (its own list, asked once). */
  private readonly languages: EspeakLanguages;

  constructor(
    private readonly cfg: VoiceConfig,
    private readonly log?: Pick<Logger, 'debug'>,
  ) {
    this.gate = new SpeechGate(cfg.sttMaxConcurrent, cfg.sttMaxQueue);
    this.languages = new EspeakLanguages(() => this.bin('espeak-ng'), cfg.timeoutMs);
  }

  private bin(name: string): string | null {
    return findProgram(name, this.cfg.offlineBinDir);
  }

  defaults(): ProviderDefaults {
    return { model: 'espeak-ng', voice: 'en-us', sample_rate: 22050 };
  }

  unavailable(): string | null {
    const missing = ['espeak-ng', 'lame'].filter((n) => !this.bin(n));
    return missing.length > 0 ? `the offline provider needs ${missing.join(' and ')} (Debian: apt-get install espeak-ng lame)` : null;
  }

  unavailableError(): VoiceProviderError | null {
    const why = this.unavailable();
    return why ? new VoiceProviderError('voice.provider_unavailable', why, 'unavailable') : null;
  }

  takesVoice(voice: string): boolean {
    return isEspeakVoice(voice);
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
    const refused = this.unavailableError();
    if (refused) throw refused;
    const voice = espeakVoiceFor(req.voice ?? 'en-us', req.language);
    if (!isEspeakVoice(voice))
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

  /** espeak-ng's speech as it comes (22,050 Hz), for the streaming sessions; it has one model. */
  async speak(text: string, voice: string | null, _model: string | null, language: string | null): Promise<PcmStream> {
    return espeakPcm(this.cfg, text, espeakVoiceFor(voice ?? 'en-us', language));
  }

  /** espeak-ng speaks a language when one of its voices does (`de-DE` by its `de`); it says which it has otherwise. */
  speechLanguage(raw: string): Promise<SpeechLanguage> {
    return this.languages.resolve(raw);
  }

  /**
   * Speech to text, bounded (security issue items 3 and 4): the upload must be a container the clients
   * record (told by its bytes); at most `sttMaxConcurrent` jobs run, `sttMaxQueue` wait, the rest get 503;
   * each job is one program at a time (ffmpeg, then pocketsphinx) under one wall-clock bound, killed when
   * the caller leaves; decoded audio goes to a private temp file, never into the relay's memory, and
   * stops at `sttMaxSeconds` (413 past it). Errors name no path and repeat no program output.
   */
  async transcribe(req: TranscriptionRequest): Promise<Transcription> {
    const why = this.sttUnavailable();
    if (why) throw new VoiceProviderError('voice.provider_unavailable', why, 'unavailable');
    const container = sniffAudio(req.audio);
    if (!container)
      throw new VoiceProviderError('voice.unsupported_audio', `the upload is not audio the relay reads; send ${KNOWN_AUDIO}`, 'unsupported');
    const ffmpeg = this.bin('ffmpeg');
    const lame = this.bin('lame');
    if (!ffmpeg && container !== 'wav' && !(container === 'mp3' && lame))
      throw new VoiceProviderError(
        'voice.unsupported_audio',
        'the offline provider reads WAV (PCM) or MP3 audio, and other formats with ffmpeg, which is not installed. Install ffmpeg (apt-get install ffmpeg), record WAV, or configure a cloud provider (stt.provider: openai and an API key)',
        'unsupported',
      );
    const release = await this.gate.acquire({ signal: req.signal, waitMs: this.cfg.timeoutMs }).catch((e: Error) => {
      throw this.sttError(e, 'queue');
    });
    const deadline = performance.now() + this.cfg.timeoutMs;
    const left = () => deadline - performance.now();
    let dir: string | null = null;
    try {
      dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'svc-stt-'));
      // pocketsphinx opens its input by name: 16 kHz mono 16-bit WAV with the plain 44-byte header (it
      // skips exactly that; it hears the same samples worse when they come headerless).
      const pcm = path.join(dir, 'audio.wav');
      if (container === 'wav') await this.convertWav(req.audio, pcm);
      else if (ffmpeg) await this.decodeWithFfmpeg(ffmpeg, container, req.audio, dir, pcm, { timeoutMs: left(), signal: req.signal });
      else await this.decodeWithLame(lame!, req.audio, dir, pcm, { timeoutMs: left(), signal: req.signal });
      const bytes = (await fs.promises.stat(pcm)).size - WAV_HEADER_BYTES;
      if (bytes > Math.ceil((this.cfg.sttMaxSeconds + 0.25) * 16_000) * 2) throw new AudioTooLong('decoded past the bound');
      const text = await this.recognize(pcm, { timeoutMs: left(), signal: req.signal });
      return { text, audioMs: Math.round(bytes / 32) };
    } catch (e) {
      throw this.sttError(e as Error, 'job');
    } finally {
      release();
      if (dir) await fs.promises.rm(dir, { recursive: true, force: true });
    }
  }

  /** Transcriptions running and waiting now. */
  get sttLoad(): { running: number; waiting: number } {
    return { running: this.gate.active, waiting: this.gate.waiting };
  }

  /**
   * Any allowed container through ffmpeg: the demuxer the bytes named is forced (`-f`) and is the only
   * format ffmpeg may open (`-format_whitelist`: no playlist, concat script or nested format), the one
   * input file is the only protocol (`-protocol_whitelist file`: nothing else is read, no network), and
   * the output stops past the duration bound (`-t`, `-fs`), written to a file (MP4 keeps its index at the
   * end, so the input is a seekable file too). `-bitexact` keeps the WAV header at 44 bytes.
   */
  private async decodeWithFfmpeg(
    bin: string,
    container: AudioContainer,
    audio: Buffer,
    dir: string,
    pcm: string,
    opts: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<void> {
    const input = path.join(dir, 'upload');
    await fs.promises.writeFile(input, audio, { mode: 0o600 });
    const seconds = this.cfg.sttMaxSeconds + 1;
    const demuxer = FFMPEG_DEMUXER[container];
    const args = [
      ...['-nostdin', '-hide_banner', '-loglevel', 'error', '-threads', '1'],
      ...['-protocol_whitelist', 'file', '-format_whitelist', demuxer, '-f', demuxer],
      ...(container === 'mp4' ? ['-enable_drefs', '0'] : []), // ffmpeg's default, said: no track read from another file
      ...['-i', `file:${input}`],
      ...['-map', '0:a:0', '-vn', '-sn', '-dn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-bitexact', '-f', 'wav'],
      ...['-t', String(seconds), '-fs', String((seconds + 1) * 32_000), '-y', `file:${pcm}`],
    ];
    const run = startSpeech(bin, args, opts);
    run.stdout.resume();
    await run.finished;
  }

  /**
   * WAV (the realtime agent's, most uploads) needs no program: converted here in 64 KiB slices, the event
   * loop free between them, stopped at the duration bound, so the work is at most linear in the upload.
   */
  private async convertWav(audio: Buffer, pcm: string): Promise<void> {
    const conv = new WavTo16k(this.cfg.sttMaxSeconds);
    await writeWavFile(pcm, async (write) => {
      for (let off = 0; off < audio.length; off += SLICE_BYTES) {
        await write(conv.push(audio.subarray(off, off + SLICE_BYTES)));
        await new Promise((r) => setImmediate(r));
      }
      await write(conv.end());
    });
  }

  /** MP3 without ffmpeg: lame decodes to WAV on its stdout, converted as it streams and stopped past the bound. */
  private async decodeWithLame(
    bin: string,
    audio: Buffer,
    dir: string,
    pcm: string,
    opts: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<void> {
    const input = path.join(dir, 'upload.mp3');
    await fs.promises.writeFile(input, audio, { mode: 0o600 });
    const run = startSpeech(bin, ['--quiet', '--decode', '--mp3input', input, '-'], opts);
    const conv = new WavTo16k(this.cfg.sttMaxSeconds);
    try {
      await writeWavFile(pcm, async (write) => {
        for await (const c of run.stdout as AsyncIterable<Buffer>) await write(conv.push(c));
        await run.finished;
        await write(conv.end());
      });
    } catch (e) {
      run.kill(e as Error);
      throw e;
    }
  }

  private async recognize(wav: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<string> {
    const model = this.cfg.sphinxModelDir;
    const args = [
      ...['-infile', wav, '-samprate', '16000', '-logfn', '/dev/null'],
      ...['-hmm', path.join(model, 'en-us'), '-lm', path.join(model, 'en-us.lm.bin'), '-dict', path.join(model, 'cmudict-en-us.dict')],
    ];
    const run = startSpeech(this.bin('pocketsphinx_continuous')!, args, opts);
    const chunks: Buffer[] = [];
    let size = 0;
    run.stdout.on('data', (d: Buffer) => {
      size += d.length;
      if (size > MAX_TRANSCRIPT_BYTES) run.kill(new SpeechFailed('pocketsphinx_continuous', 'with too much output', ''));
      else chunks.push(d);
    });
    await run.finished;
    return Buffer.concat(chunks)
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .join(' ');
  }

  /** A failure as the caller may see it: a plain reason and a code, never a path or a program's output. */
  private sttError(e: Error, stage: 'queue' | 'job'): Error {
    if (e instanceof DomainError || e instanceof VoiceProviderError) return e;
    if (e instanceof SpeechGateBusy)
      return new DomainError('voice.busy', 'unavailable', 'speech to text is busy; try again shortly', {
        success: false,
        retry_after: BUSY_RETRY_AFTER_SECONDS,
      });
    if (e instanceof SpeechAborted) return new VoiceProviderError('voice.aborted', 'the request was aborted', 'invalid');
    if (e instanceof AudioTooLong)
      return new DomainError(
        'voice.audio_too_long',
        'too_large',
        `the audio is longer than ${this.cfg.sttMaxSeconds} s, the most offline speech to text takes (RELAY_VOICE_STT_MAX_SECONDS)`,
        { success: false, max_seconds: this.cfg.sttMaxSeconds },
      );
    if (e instanceof SpeechTimeout)
      return new VoiceProviderError(
        'voice.provider_timeout',
        `speech to text took longer than ${Math.round(this.cfg.timeoutMs / 1000)} s (RELAY_VOICE_TIMEOUT_SECONDS) and was stopped`,
        'timeout',
      );
    if (e instanceof WavError) return new VoiceProviderError('voice.bad_audio', `the WAV could not be read: ${e.message}`, 'invalid');
    if (e instanceof SpeechFailed) {
      this.log?.debug({ program: e.program, exit: e.exit, stderr: e.stderr }, 'offline speech to text: a program failed');
      if (e.program === 'ffmpeg') return new VoiceProviderError('voice.undecodable_audio', UNDECODABLE, 'unsupported');
      if (e.program === 'lame') return new VoiceProviderError('voice.bad_audio', 'the MP3 could not be decoded (damaged or not MP3)', 'invalid');
      return new VoiceProviderError('voice.transcription_failed', `pocketsphinx failed (exit ${e.exit})`);
    }
    this.log?.debug({ stage, err: e.message }, 'offline speech to text failed');
    return new VoiceProviderError('voice.transcription_failed', 'offline speech to text failed; see the relay log');
  }

  /** One engine for every section; the languages are the installed espeak-ng's (a short list when it cannot be asked). */
  async options(_section?: VoiceSection): Promise<ProviderOptions> {
    const installed = await this.languages.names().catch(() => new Set<string>());
    return {
      provider: this.id,
      label: this.label,
      models: ['espeak-ng'],
      voices: ESPEAK_VOICES,
      languages: installed.size > 0 ? [...installed].sort() : ['en', 'de', 'fr', 'es'],
      sample_rates: [22050],
      source: 'static',
    };
  }
}

/** A program's failure as the caller sees it: past its time bound 504 `voice.provider_timeout`, else 502. */
function failed(code: string, program: string, e: Error): VoiceProviderError {
  if (e instanceof ToolTimeoutError) return new VoiceProviderError('voice.provider_timeout', `${program}: ${e.message}`, 'timeout');
  return new VoiceProviderError(code, `${program}: ${e.message}`);
}

/** A 16 kHz mono WAV written as `produce` hands it PCM: a header placeholder first, its sizes filled in at the end. */
async function writeWavFile(file: string, produce: (write: (pcm: Buffer) => Promise<unknown>) => Promise<void>): Promise<void> {
  const out = await fs.promises.open(file, 'wx', 0o600);
  try {
    let bytes = 0;
    await out.write(Buffer.alloc(WAV_HEADER_BYTES), 0, WAV_HEADER_BYTES, 0);
    await produce(async (pcm) => {
      if (pcm.length === 0) return;
      await out.write(pcm, 0, pcm.length, WAV_HEADER_BYTES + bytes);
      bytes += pcm.length;
    });
    const header = writeWav16({ sampleRate: 16_000, samples: new Float32Array(0) });
    header.writeUInt32LE(36 + bytes, 4);
    header.writeUInt32LE(bytes, 40);
    await out.write(header, 0, WAV_HEADER_BYTES, 0);
  } finally {
    await out.close();
  }
}
