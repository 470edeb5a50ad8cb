import type { WebSocket } from 'ws';
import type { VoiceConfig } from '../common/config/relay-config';
import { parseJsonObject } from '../common/sockets/json-object';
import { AgentRun } from './agent-run';
import { openProviderRealtime } from './realtime-upstream';
import { errorFieldText } from './upstream-error';
import type { VoiceWire } from './voice-wire';

/** Provider messages waiting behind one that waits (back-pressure, a held session): past this the provider's socket is paused. */
const MAX_QUEUED = 8;

/** The narrow tool surface the provider's model may call, named in the relay's spelling (`hermes_run_task` for the public clients). */
function toolSpecs(wire: VoiceWire) {
  const agent = wire.agentName;
  return [
    {
      type: 'function',
      name: wire.tool('run_task'),
      description: `Ask the ${agent} agent to do something or answer something it knows; returns its answer.`,
      parameters: {
        type: 'object',
        properties: { task: { type: 'string', description: 'what the user wants, in their words' } },
        required: ['task'],
      },
    },
    {
      type: 'function',
      name: wire.tool('get_status'),
      description: `Whether a ${agent} task is running, and the last answer.`,
      parameters: { type: 'object', properties: {} },
    },
    { type: 'function', name: wire.tool('cancel'), description: `Cancel the running ${agent} task.`, parameters: { type: 'object', properties: {} } },
    {
      type: 'function',
      name: wire.tool('confirm'),
      description: `Answer a confirmation ${agent} asked for.`,
      parameters: {
        type: 'object',
        properties: { confirmation_id: { type: 'string' }, answer: { type: 'string', enum: ['yes', 'no'] } },
        required: ['answer'],
      },
    },
  ];
}

/** What the engine reads of its realtime-agent session (voice-session.ts), and the run it sets for the progress heartbeat. */
export type NativeSession = {
  readonly provider: string;
  readonly model: string;
  readonly voice: string;
  readonly profile: string | null;
  readonly chatSessionId: string | null;
  readonly ended: boolean;
  run: AgentRun | null;
};

/** What the provider-native engine needs of the session's socket and of the agent. */
export type NativeIo = {
  send(event: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
  audio(pcm: Buffer, type: string): Promise<void>;
  ask(text: string, signal: AbortSignal, run: AgentRun): Promise<string>;
};

/**
 * The realtime-agent broker's provider-native engine (a provider with a realtime API, `openai`): one socket
 * to the provider for the session, declared with the narrow tool surface. The phone's mic is forwarded;
 * the provider's speech, its words, the input transcript and its tool calls are mirrored to the phone.
 * `<brand>_run_task` runs an agent turn (the same agent API as the fallback engine) and hands the answer
 * back to the provider to speak; status, cancel and confirm act on that task. Every tool call is
 * mirrored as `voice.tool.requested`/`voice.tool.completed` and as the app reads it (`<brand>.tool.started`,
 * `<brand>.tool.completed|failed`), a run as `<brand>.run.started|progress|completed|failed` with the
 * agent's own tool calls inside it. Provider messages are handled one at a time, in order.
 */
export class NativeAgentLink {
  private readonly sock: WebSocket;
  private readonly opened: Promise<void>;
  private running: { abort: AbortController; task: string } | null = null;
  private lastAnswer: string | null = null;
  private transcript = '';
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(
    cfg: VoiceConfig,
    private readonly s: NativeSession,
    private readonly wire: VoiceWire,
    private readonly now: () => number,
    private readonly io: NativeIo,
  ) {
    ({ sock: this.sock, opened: this.opened } = openProviderRealtime(cfg, s.model, {
      voice: s.voice,
      instructions: `You are the voice of the ${wire.agentName} agent. For anything that needs the agent (its tools, files, memory, actions), call ${wire.tool('run_task')} with the request and speak its answer briefly.`,
      tools: toolSpecs(wire),
      tool_choice: 'auto',
    }));
    this.opened.catch((err: Error) => this.io.error(err.message, { code: (err as { code?: string }).code ?? 'voice.provider_error' }));
    // One message at a time, in order: an audio delta waiting on back-pressure (or on a held session) keeps
    // the next behind it; past MAX_QUEUED waiting the provider's socket is paused, so memory stays bounded.
    this.sock.on('message', (data) => {
      const text = String(data);
      if (++this.queued > MAX_QUEUED) this.sock.pause();
      this.chain = this.chain
        .then(() => this.onMessage(text))
        .catch((err: Error) => this.io.error(err.message.slice(0, 300), { code: 'voice.provider_error' }))
        .finally(() => {
          if (--this.queued <= 1) this.sock.resume();
        });
    });
    this.sock.on('error', () => undefined);
    this.sock.on('close', () => {
      if (!s.ended) this.io.error('the realtime provider closed the connection', { code: 'voice.provider_closed' });
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
      return this.io.error('the realtime provider sent a frame that is not a JSON object with a type; dropped', {
        code: 'voice.provider_bad_frame',
      });
    switch (m.type) {
      case 'response.created':
        this.transcript = '';
        return this.io.send({ type: 'voice.response.started', provider: s.provider, model: s.model, voice: s.voice, render_mode: 'conversation' });
      case 'response.audio.delta':
        if (typeof m.delta === 'string') await this.io.audio(Buffer.from(m.delta, 'base64'), 'voice.output_audio.delta');
        return;
      case 'response.audio_transcript.delta':
        if (typeof m.delta === 'string') {
          this.transcript += m.delta;
          this.io.send({ type: 'voice.response.delta', delta: m.delta, source: 'provider' });
        }
        return;
      case 'conversation.item.input_audio_transcription.completed':
        if (typeof m.transcript === 'string') this.io.send({ type: 'voice.input_transcript.final', text: m.transcript });
        return;
      case 'response.function_call_arguments.done':
        // Not awaited: an agent run takes its time while the provider's other messages go on.
        void this.tool(
          String(m.name ?? '').slice(0, 80),
          String(m.call_id ?? '').slice(0, 128),
          typeof m.arguments === 'string' ? m.arguments : '{}',
        );
        return;
      case 'response.done':
        this.io.send({ type: 'voice.output_audio.done' });
        return this.io.send({ type: 'voice.response.done', text: this.transcript, provider: s.provider, voice: s.voice });
      case 'error':
        return this.io.error(`the realtime provider: ${errorFieldText(m.error)}`.slice(0, 300), { code: 'voice.provider_error' });
      default:
        return;
    }
  }

  private async tool(name: string, callId: string, rawArgs: string): Promise<void> {
    const s = this.s;
    // Arguments the model garbled (or sent past 64 KiB) are none: the tool says what it lacks.
    const args: Record<string, unknown> = (rawArgs.length <= 64 * 1024 ? parseJsonObject(rawArgs) : null) ?? {};
    const base = { source: this.wire.brand, session_id: s.chatSessionId, chat_session_id: s.chatSessionId, tool_call_id: callId, tool_name: name };
    this.io.send({ type: 'voice.tool.requested', name, call_id: callId, arguments: args });
    this.io.send({ type: this.wire.frame('tool.started'), ...base });
    let output: string;
    let ok = true;
    switch (this.wire.toolOf(name)) {
      case 'run_task': {
        const task = typeof args.task === 'string' ? args.task.trim().slice(0, 5000) : '';
        if (task === '') {
          output = `error: ${name} needs a task`;
          ok = false;
          break;
        }
        if (this.running) {
          output = `a task is already running; call ${this.wire.tool('get_status')} or ${this.wire.tool('cancel')}`;
          ok = false;
          break;
        }
        const abort = new AbortController();
        this.running = { abort, task };
        const run = (s.run = new AgentRun(this.wire, s, (f) => this.io.send(f), this.now));
        run.started(this.wire.tools);
        try {
          output = await this.io.ask(task, abort.signal, run);
          this.lastAnswer = output;
          run.completed(output);
        } catch (err) {
          ok = false;
          output = abort.signal.aborted ? 'the task was cancelled' : `the agent could not be reached: ${(err as Error).message}`.slice(0, 300);
          run.failed(output, abort.signal.aborted);
        } finally {
          this.running = null;
          if (s.run === run) s.run = null;
        }
        break;
      }
      case 'get_status':
        output = JSON.stringify({ running: this.running !== null, last_answer: this.lastAnswer });
        break;
      case 'cancel':
        output = this.running ? 'cancelled' : 'nothing is running';
        this.running?.abort.abort();
        break;
      case 'confirm':
        // The agent API this relay drives asks no confirmations; nothing can be waiting for one.
        output = 'nothing is waiting for a confirmation';
        break;
      default:
        ok = false;
        output = `unknown tool ${name}; the tools are ${this.wire.tools.join(', ')}`;
    }
    this.io.send({ type: 'voice.tool.completed', name, call_id: callId, ok });
    this.io.send({ type: this.wire.frame(ok ? 'tool.completed' : 'tool.failed'), ...base, success: ok });
    await this.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output } }).catch(() => undefined);
    await this.send({ type: 'response.create', response: { modalities: ['audio', 'text'] } }).catch(() => undefined);
  }
}
