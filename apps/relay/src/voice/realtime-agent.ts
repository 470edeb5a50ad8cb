import { MAX_CONTEXT_CHARS, MAX_CONTEXT_MESSAGES, MAX_TTS_CHARS } from '@svc/domain';
import type { RelayConfig } from '../common/config/relay-config';
import { readAgentAnswer, readCapped } from './agent-answer';
import { AgentRun } from './agent-run';
import { metricsOf } from './pcm-stream';
import type { SessionStream } from './session-stream';
import { sanitizeForSpeech, truncateForSpeech } from './speech-text';
import { errorBodyText } from './upstream-error';
import type { VoiceConfigFiles } from './voice-config';
import { VoiceProviderError } from './voice-provider';
import type { VoiceProviders } from './voice-providers';
import type { AgentSession } from './voice-session';
import type { VoiceWire } from './voice-wire';
import { writeWav16 } from './wav';
/** The agent API's answer is read up to this many bytes (JSON, or the SSE stream); a longer body is refused. */
export const MAX_AGENT_RESPONSE_BYTES = 1024 * 1024;
/** The answer's text as mirrored to the phone (and handed to the provider-native engine), at most. */
export const MAX_AGENT_ANSWER_CHARS = 20_000;
/** Of an error answer, this much is read (and 200 characters of it quoted). */
const MAX_AGENT_ERROR_BYTES = 4096;

/**
 * The realtime-agent broker (spec 4.5, experimental), its "fallback engine": a turn is the committed mic
 * audio transcribed by the stt provider, or typed text; it goes to the agent host's OpenAI-compatible chat
 * API with the session's context; the answer is mirrored as text and spoken with the voice output provider.
 */
export class RealtimeAgentBroker {
  constructor(
    private readonly config: RelayConfig,
    private readonly providers: VoiceProviders,
    private readonly files: VoiceConfigFiles,
    private readonly wire: VoiceWire,
    private readonly stream: SessionStream,
    private readonly now: () => number,
    /** False once the session's caller lost the right to it (revoked, expired, grant gone): no new agent call then. */
    private readonly allowed: (s: AgentSession) => boolean,
  ) {}

  /**
   * One turn of the agent host's OpenAI-compatible chat API (`RELAY_WEBAPI_URL` `/v1/chat/completions`, the
   * API key, the chat session id as `X-Hermes-Session-Id`, the session's context), bounded by the voice
   * timeout and `signal`. Asked as a stream: the agent's own tool calls (`hermes.tool.progress` events)
   * go to `run` as they happen. Returns the answer's text. The header and the model name are the agent
   * API's (the host's hermes API server reads `X-Hermes-Session-Id` only), whatever the relay's spelling.
   */
  async ask(s: AgentSession, text: string, signal: AbortSignal, run: AgentRun | null = null): Promise<string> {
    if (!this.allowed(s))
      throw new VoiceProviderError('voice.session_revoked', "this voice session's relay session was revoked, expired or lost its grant", 'invalid');
    const bound = AbortSignal.any([signal, AbortSignal.timeout(this.config.voice.timeoutMs)]);
    const res = await fetch(`${this.config.webapiUrl.replace(/(?<!\/)\/+$/, '')}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream, application/json',
        ...(this.config.apiServer.key ? { authorization: `Bearer ${this.config.apiServer.key}` } : {}),
        ...(s.chatSessionId ? { 'x-hermes-session-id': s.chatSessionId } : {}),
      },
      body: JSON.stringify({ model: 'hermes-agent', stream: true, messages: [...s.context, { role: 'user', content: text }] }),
      signal: bound,
    });
    if (res.status === 401 || res.status === 403)
      throw new VoiceProviderError('voice.agent_auth', `the agent API refused the relay (${res.status}): set API_SERVER_KEY to the API server's key`);
    if (!res.ok)
      throw new VoiceProviderError(
        'voice.agent_error',
        `the agent API answered ${res.status}: ${errorBodyText(await readCapped(res, MAX_AGENT_ERROR_BYTES, false)).slice(0, 200)}`,
      );
    const raw = await readAgentAnswer(res, MAX_AGENT_RESPONSE_BYTES, (e) => run?.tool(e));
    const content = raw.length > MAX_AGENT_ANSWER_CHARS ? truncateForSpeech(raw, MAX_AGENT_ANSWER_CHARS).text : raw;
    s.context.push({ role: 'user', content: text.slice(0, MAX_CONTEXT_CHARS) }, { role: 'assistant', content: content.slice(0, MAX_CONTEXT_CHARS) });
    s.context = s.context.slice(-MAX_CONTEXT_MESSAGES);
    return content;
  }

  /** realtime_agent: the committed mic audio (16-bit PCM) is transcribed by the stt provider, then taken as the turn. */
  async turnFromAudio(s: AgentSession): Promise<void> {
    const pcm = Buffer.concat(s.inputPcm);
    s.inputPcm = [];
    if (pcm.length < 2) return this.stream.error(s, 'input_audio.commit with no audio appended');
    s.busy = true;
    let text: string;
    try {
      const samples = new Float32Array(Math.floor(pcm.length / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2) / 32768;
      const stt = this.providers.section(this.files.resolve(s.profile), 'stt');
      if (!stt.providerId)
        throw new VoiceProviderError('voice.provider_unavailable', `stt provider "${stt.configured}" is not available in this relay`, 'unavailable');
      const r = await this.providers.get(stt.providerId).transcribe({
        audio: writeWav16({ sampleRate: s.inputRate, samples }),
        contentType: 'audio/wav',
        fileName: 'input.wav',
        language: null,
        model: null,
      });
      text = r.text.trim();
    } catch (err) {
      s.busy = false;
      return this.stream.error(s, `transcription failed: ${(err as Error).message}`, {
        code: (err as { code?: string }).code ?? 'voice.transcription_failed',
      });
    }
    this.stream.send(s, { type: 'voice.input_transcript.final', text });
    s.busy = false;
    if (text === '') return this.stream.error(s, 'nothing was heard in the committed audio', { code: 'voice.empty_transcript' });
    return this.turn(s, text, true);
  }

  /**
   * realtime_agent's fallback engine: the turn goes to the agent host's OpenAI-compatible chat API
   * (RELAY_WEBAPI_URL `/v1/chat/completions`, the API key, the chat session id as `X-Hermes-Session-Id`),
   * its answer is mirrored as `voice.response.delta` and spoken with the voice output provider. The agent
   * runs its own tools; the broker exposes none (`tool_surface: []`).
   */
  async turn(s: AgentSession, raw: string, heard = false): Promise<void> {
    let text = raw.trim();
    if (text === '') return this.stream.error(s, 'response.create missing text');
    // Typed text past the bound is refused; a long transcript (up to 16 MiB of audio) is cut at a sentence.
    if (text.length > MAX_TTS_CHARS) {
      if (!heard) return this.stream.error(s, `text exceeds ${MAX_TTS_CHARS} characters`, { code: 'voice.text_too_long' });
      text = truncateForSpeech(text, MAX_TTS_CHARS).text;
    }
    if (!this.allowed(s)) return;
    s.busy = true;
    s.responded = true;
    const abort = (s.abort = new AbortController());
    const started = performance.now();
    const run = (s.run = new AgentRun(this.wire, s, (f) => this.stream.send(s, f), this.now));
    run.started([]);
    this.stream.send(s, {
      type: 'voice.response.started',
      provider: s.provider,
      model: s.model,
      voice: s.voice,
      render_mode: 'conversation',
      text_chars: text.length,
    });
    let answer: string;
    try {
      answer = await this.ask(s, text, abort.signal, run);
    } catch (err) {
      s.busy = false;
      s.abort = null;
      if (s.run === run) s.run = null;
      if (abort.signal.aborted) {
        run.failed('the turn was cancelled or timed out', true);
        return this.stream.error(s, 'the turn was cancelled or timed out', { code: 'voice.turn_cancelled' });
      }
      const message =
        err instanceof VoiceProviderError ? err.message : `cannot reach the agent API at ${this.config.webapiUrl}: ${(err as Error).message}`;
      run.failed(message);
      return this.stream.error(s, message, { code: (err as { code?: string }).code ?? 'voice.agent_unreachable' });
    }
    if (s.run === run) s.run = null;
    run.completed(null);
    this.stream.send(s, { type: 'voice.response.delta', delta: answer, source: this.wire.brand, delivery: 'final' });
    // The answer is at most MAX_AGENT_ANSWER_CHARS (ask); what is spoken is at most what one response may speak.
    const spoken = truncateForSpeech(sanitizeForSpeech(answer), MAX_TTS_CHARS).text;
    s.chars += spoken.length;
    let firstAudioMs: number | null = null;
    try {
      if (spoken !== '') {
        // The session's model is a realtime one: the answer is spoken with the provider's speech model.
        s.stream = await s.engine.speak(spoken, s.voice, null, s.language);
        firstAudioMs = await this.stream.pump(s, 'voice.output_audio.delta', started);
      }
      s.stream = null;
      this.stream.send(s, { type: 'voice.output_audio.done' });
      this.stream.send(s, {
        type: 'voice.response.done',
        text: answer,
        provider: s.provider,
        voice: s.voice,
        metrics: metricsOf(s, firstAudioMs, started),
      });
    } catch (err) {
      s.stream?.stop();
      s.stream = null;
      this.stream.error(s, err instanceof VoiceProviderError ? err.message : `speaking the answer failed: ${(err as Error).message}`, {
        code: (err as { code?: string }).code ?? 'voice.provider_failed',
      });
    }
    s.busy = false;
    s.abort = null;
    this.stream.touch(s);
  }
}
