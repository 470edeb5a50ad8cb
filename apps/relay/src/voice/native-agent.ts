import type { WebSocket } from 'ws';
import { parseJsonObject } from '../common/json-object';
import { openProviderRealtime, providerMessage } from './realtime-upstream';
import type { RelayConfig } from '../common/config';
import type { Live } from './voice-sessions.service';

/** The narrow tool surface the provider's model may call (the reference broker's names). */
export const AGENT_TOOLS = ['hermes_run_task', 'hermes_get_status', 'hermes_cancel', 'hermes_confirm'] as const;

const TOOL_SPECS = [
  {
    type: 'function',
    name: 'hermes_run_task',
    description: 'Ask the Hermes agent to do something or answer something it knows; returns its answer.',
    parameters: { type: 'object', properties: { task: { type: 'string', description: 'what the user wants, in their words' } }, required: ['task'] },
  },
  {
    type: 'function',
    name: 'hermes_get_status',
    description: 'Whether a Hermes task is running, and the last answer.',
    parameters: { type: 'object', properties: {} },
  },
  { type: 'function', name: 'hermes_cancel', description: 'Cancel the running Hermes task.', parameters: { type: 'object', properties: {} } },
  {
    type: 'function',
    name: 'hermes_confirm',
    description: 'Answer a confirmation Hermes asked for.',
    parameters: {
      type: 'object',
      properties: { confirmation_id: { type: 'string' }, answer: { type: 'string', enum: ['yes', 'no'] } },
      required: ['answer'],
    },
  },
];

/** What the provider-native engine needs of the session socket and of the agent. */
export type NativeIo = {
  send(s: Live, event: Record<string, unknown>): void;
  error(s: Live, message: string, extra?: Record<string, unknown>): void;
  audio(s: Live, pcm: Buffer, type: string): Promise<void>;
  ask(s: Live, text: string, signal: AbortSignal): Promise<string>;
};

/**
 * The realtime-agent broker's provider-native engine (a provider with a realtime API, `openai`): one socket
 * to the provider for the session, declared with the narrow tool surface. The phone's mic is forwarded;
 * the provider's speech, its words, the input transcript and its tool calls are mirrored to the phone.
 * `hermes_run_task` runs an agent turn (the same agent API as the fallback engine) and hands the answer
 * back to the provider to speak; status, cancel and confirm act on that task. Every tool call is
 * mirrored as `voice.tool.requested` and `voice.tool.completed`.
 */
export class NativeAgentLink {
  private readonly sock: WebSocket;
  private readonly opened: Promise<void>;
  private running: { abort: AbortController; task: string } | null = null;
  private lastAnswer: string | null = null;
  private transcript = '';

  constructor(
    cfg: RelayConfig,
    private readonly s: Live,
    private readonly io: NativeIo,
  ) {
    ({ sock: this.sock, opened: this.opened } = openProviderRealtime(cfg.voice, s.model, {
      voice: s.voice,
      instructions:
        'You are the voice of the Hermes agent. For anything that needs the agent (its tools, files, memory, actions), call hermes_run_task with the request and speak its answer briefly.',
      tools: TOOL_SPECS,
      tool_choice: 'auto',
    }));
    this.opened.catch((err: Error) => this.io.error(s, err.message, { code: (err as { code?: string }).code ?? 'voice.provider_error' }));
    this.sock.on('message', (data) =>
      this.onMessage(String(data)).catch((err: Error) => this.io.error(s, err.message.slice(0, 300), { code: 'voice.provider_error' })),
    );
    this.sock.on('error', () => undefined);
    this.sock.on('close', () => {
      if (!s.ended) this.io.error(s, 'the realtime provider closed the connection', { code: 'voice.provider_closed' });
    });
  }

  private async send(frame: Record<string, unknown>): Promise<void> {
    await this.opened;
    if (this.sock.readyState === this.sock.OPEN) this.sock.send(JSON.stringify(frame));
  }

  appendAudio(base64: string): void {
    void this.send({ type: 'input_audio_buffer.append', audio: base64 }).catch(() => undefined);
  }

  commit(): void {
    void this.send({ type: 'input_audio_buffer.commit' })
      .then(() => this.send({ type: 'response.create', response: { modalities: ['audio', 'text'] } }))
      .catch(() => undefined);
  }

  say(text: string): void {
    void this.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } })
      .then(() => this.send({ type: 'response.create', response: { modalities: ['audio', 'text'] } }))
      .catch(() => undefined);
  }

  cancel(): void {
    this.running?.abort.abort();
    void this.send({ type: 'response.cancel' }).catch(() => undefined);
  }

  close(): void {
    this.running?.abort.abort();
    this.sock.terminate();
  }

  private async onMessage(text: string): Promise<void> {
    const s = this.s;
    // Validated before any field is read: a provider sending `null` costs this session an error, nothing more.
    const m = parseJsonObject(text);
    if (m === null || typeof m.type !== 'string')
      return this.io.error(s, 'the realtime provider sent a frame that is not a JSON object with a type; dropped', {
        code: 'voice.provider_bad_frame',
      });
    switch (m.type) {
      case 'response.created':
        this.transcript = '';
        return this.io.send(s, { type: 'voice.response.started', provider: s.provider, model: s.model, voice: s.voice, render_mode: 'conversation' });
      case 'response.audio.delta':
        if (typeof m.delta === 'string') await this.io.audio(s, Buffer.from(m.delta, 'base64'), 'voice.output_audio.delta');
        return;
      case 'response.audio_transcript.delta':
        if (typeof m.delta === 'string') {
          this.transcript += m.delta;
          this.io.send(s, { type: 'voice.response.delta', delta: m.delta, source: 'provider' });
        }
        return;
      case 'conversation.item.input_audio_transcription.completed':
        if (typeof m.transcript === 'string') this.io.send(s, { type: 'voice.input_transcript.final', text: m.transcript });
        return;
      case 'response.function_call_arguments.done':
        return this.tool(String(m.name ?? ''), String(m.call_id ?? ''), typeof m.arguments === 'string' ? m.arguments : '{}');
      case 'response.done':
        this.io.send(s, { type: 'voice.output_audio.done' });
        return this.io.send(s, { type: 'voice.response.done', text: this.transcript, provider: s.provider, voice: s.voice });
      case 'error':
        return this.io.error(s, `the realtime provider: ${providerMessage(m.error)}`.slice(0, 300), { code: 'voice.provider_error' });
      default:
        return;
    }
  }

  private async tool(name: string, callId: string, rawArgs: string): Promise<void> {
    const s = this.s;
    let args: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(rawArgs);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
    } catch {
      // arguments the model garbled: the tool says so below
    }
    this.io.send(s, { type: 'voice.tool.requested', name, call_id: callId, arguments: args });
    let output: string;
    let ok = true;
    switch (name) {
      case 'hermes_run_task': {
        const task = typeof args.task === 'string' ? args.task.trim().slice(0, 5000) : '';
        if (task === '') {
          output = 'error: hermes_run_task needs a task';
          ok = false;
          break;
        }
        if (this.running) {
          output = 'a task is already running; call hermes_get_status or hermes_cancel';
          ok = false;
          break;
        }
        const abort = new AbortController();
        this.running = { abort, task };
        this.io.send(s, { type: 'hermes.run.started', chat_session_id: s.chatSessionId, profile: s.profile, tool_surface: AGENT_TOOLS });
        try {
          output = await this.io.ask(s, task, abort.signal);
          this.lastAnswer = output;
          this.io.send(s, { type: 'hermes.run.completed', chat_session_id: s.chatSessionId, text: output });
        } catch (err) {
          ok = false;
          output = abort.signal.aborted ? 'the task was cancelled' : `the agent could not be reached: ${(err as Error).message}`.slice(0, 300);
          this.io.send(s, { type: 'hermes.run.failed', chat_session_id: s.chatSessionId, message: output });
        } finally {
          this.running = null;
        }
        break;
      }
      case 'hermes_get_status':
        output = JSON.stringify({ running: this.running !== null, last_answer: this.lastAnswer });
        break;
      case 'hermes_cancel':
        output = this.running ? 'cancelled' : 'nothing is running';
        this.running?.abort.abort();
        break;
      case 'hermes_confirm':
        // The agent API this relay drives asks no confirmations; nothing can be waiting for one.
        output = 'nothing is waiting for a confirmation';
        break;
      default:
        ok = false;
        output = `unknown tool ${name.slice(0, 40)}; the tools are ${AGENT_TOOLS.join(', ')}`;
    }
    this.io.send(s, { type: 'voice.tool.completed', name, call_id: callId, ok });
    await this.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output } }).catch(() => undefined);
    await this.send({ type: 'response.create', response: { modalities: ['audio', 'text'] } }).catch(() => undefined);
  }
}
