import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { VoiceConfig } from '../common/config/relay-config';
import type { PcmStream } from './pcm-stream';
import { findProgram } from './run-tool';
import { VoiceProviderError } from './voice-provider';

/** espeak-ng voices offered by name (any installed espeak-ng voice is accepted). */
export const ESPEAK_VOICES = [
  { id: 'en-us', label: 'English (US)' },
  { id: 'en-gb', label: 'English (UK)' },
  { id: 'en-us+f3', label: 'English (US), female' },
  { id: 'en-gb+m3', label: 'English (UK), male' },
  { id: 'de', label: 'German' },
  { id: 'fr', label: 'French' },
  { id: 'es', label: 'Spanish' },
];

const VOICE_RE = /^[a-z]{2,3}(-[a-z0-9]{1,8}){0,5}(\+[a-z0-9]{1,16})?$/i;

/** An espeak-ng voice name (`en-us`, `en-gb-x-rp+f3`): a language and its subtags, a variant; never a path or an option. */
export const isEspeakVoice = (voice: string): boolean => VOICE_RE.test(voice);

/**
 * espeak-ng writing WAV to stdout as it speaks: the header is read for the rate, the rest is passed on
 * as it arrives. The process is killed by `stop()` or after `timeoutMs`.
 */
export function espeakPcm(cfg: VoiceConfig, text: string, voice: string | null): PcmStream {
  const bin = findProgram('espeak-ng', cfg.offlineBinDir);
  if (!bin)
    throw new VoiceProviderError(
      'voice.provider_unavailable',
      'the offline provider needs espeak-ng (Debian: apt-get install espeak-ng)',
      'unavailable',
    );
  const v = voice ?? 'en-us';
  if (!isEspeakVoice(v)) throw new VoiceProviderError('validation_failed', `voice "${v.slice(0, 40)}" is not an espeak-ng voice name`, 'invalid');
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
