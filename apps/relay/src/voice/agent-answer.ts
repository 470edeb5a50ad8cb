import { parseJsonObject } from '../common/sockets/json-object';
import { VoiceProviderError } from './voice-provider';
import { errorFieldText } from './upstream-error';

/** A tool call the agent reported while it worked (the agent API's `hermes.tool.progress` stream events). */
export type AgentToolEvent = { phase: 'started' | 'completed' | 'failed'; name: string; callId: string | null; label: string | null };

const DONE = new Set(['completed', 'complete', 'finished', 'done', 'success', 'succeeded', 'ok']);
const FAILED = new Set(['failed', 'error', 'errored', 'cancelled', 'canceled']);
/** SSE event names the agent uses for tool progress (the agent API is the host's: it writes `hermes`; both read). */
const TOOL_EVENTS = new Set(['hermes.tool.progress', 'svc.tool.progress']);

/**
 * The agent API's answer to `POST /v1/chat/completions`: a JSON completion, or (asked with `stream: true`)
 * an SSE stream of completion chunks with the agent's own `event: hermes.tool.progress` events between
 * them (`{tool, toolCallId?, status?: running|completed, label?}`), each handed to `onTool` as it arrives.
 * Read no further than `maxBytes`; past it the read is cancelled and refused. Returns the answer's text.
 */
export async function readAgentAnswer(res: Response, maxBytes: number, onTool: (e: AgentToolEvent) => void): Promise<string> {
  const type = (res.headers.get('content-type') ?? '').toLowerCase();
  if (!type.includes('text/event-stream')) {
    let j: { choices?: Array<{ message?: { content?: unknown } }> } | null;
    const text = await readCapped(res, maxBytes, true);
    try {
      j = JSON.parse(text) as typeof j;
    } catch {
      throw new VoiceProviderError('voice.agent_error', 'the agent API answered with a body that is not JSON');
    }
    const content = j?.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new VoiceProviderError('voice.agent_error', 'the agent API answered without a message');
    return content;
  }
  return readSse(res, maxBytes, onTool);
}

async function readSse(res: Response, maxBytes: number, onTool: (e: AgentToolEvent) => void): Promise<string> {
  if (!res.body) throw new VoiceProviderError('voice.agent_error', 'the agent API answered an empty stream');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let pending = '';
  let event = '';
  let data: string[] = [];
  let answer = '';
  let sawContent = false;
  let done = false;
  const dispatch = () => {
    const name = event;
    const body = data.join('\n');
    event = '';
    data = [];
    if (body === '') return;
    if (body === '[DONE]') {
      done = true;
      return;
    }
    const obj = parseJsonObject(body);
    if (obj === null) return;
    if (TOOL_EVENTS.has(name)) {
      const t = toolEvent(obj);
      if (t) onTool(t);
      return;
    }
    if (name !== '' && name !== 'message') return;
    if (obj.error !== undefined && obj.error !== null)
      throw new VoiceProviderError('voice.agent_error', `the agent API reported an error mid-answer: ${errorFieldText(obj.error).slice(0, 200)}`);
    const choice = (obj.choices as Array<{ delta?: { content?: unknown }; message?: { content?: unknown } }> | undefined)?.[0];
    const piece = choice?.delta?.content ?? choice?.message?.content;
    if (typeof piece === 'string') {
      answer += piece;
      sawContent = true;
    }
  };
  try {
    while (!done) {
      const { done: end, value } = await reader.read();
      if (end) break;
      size += value.length;
      if (size > maxBytes)
        throw new VoiceProviderError(
          'voice.agent_answer_too_large',
          `the agent API's answer exceeds ${maxBytes} bytes; the relay does not read past that`,
        );
      pending += decoder.decode(value, { stream: true });
      let start = 0;
      for (let nl = pending.indexOf('\n'); nl !== -1 && !done; nl = pending.indexOf('\n', start)) {
        const line = pending.slice(start, nl > start && pending.charCodeAt(nl - 1) === 13 ? nl - 1 : nl);
        start = nl + 1;
        if (line === '') dispatch();
        else if (line.startsWith('data:')) data.push(line.slice(line.charCodeAt(5) === 32 ? 6 : 5));
        else if (line.startsWith('event:')) event = line.slice(6).trim();
        // comments (`: keepalive`), `id:` and `retry:` carry nothing the relay uses
      }
      pending = pending.slice(start);
    }
    if (!done) dispatch();
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  if (!sawContent) throw new VoiceProviderError('voice.agent_error', 'the agent API streamed no answer');
  return answer;
}

const text = (v: unknown, max: number): string | null => {
  if (typeof v !== 'string') return null;
  // Control characters (a tool label may quote a command) become spaces, runs of white space one.
  let out = '';
  let space = false;
  for (const ch of v.slice(0, max * 2)) {
    const c = ch.codePointAt(0)!;
    const blank = c <= 32 || (c >= 127 && c < 160);
    if (blank) {
      if (!space && out !== '') out += ' ';
      space = true;
    } else {
      out += ch;
      space = false;
    }
  }
  out = out.trimEnd().slice(0, max);
  return out === '' ? null : out;
};

/** One `hermes.tool.progress` payload as a tool event; internal pseudo-tools (`_thinking`) and nameless ones are not. */
function toolEvent(d: Record<string, unknown>): AgentToolEvent | null {
  const name = text(d.tool, 80) ?? text(d.name, 80) ?? text(d.tool_name, 80);
  if (!name || name.startsWith('_')) return null;
  const status = (text(d.status, 32) ?? '').toLowerCase();
  return {
    phase: DONE.has(status) ? 'completed' : FAILED.has(status) ? 'failed' : 'started',
    name,
    callId: text(d.toolCallId, 128) ?? text(d.tool_call_id, 128) ?? text(d.call_id, 128),
    label: text(d.label, 180),
  };
}

/**
 * A response body as text, read no further than `max` bytes: past it the read is cancelled and, when
 * `strict`, refused (a JSON answer cut short is no answer); otherwise what was read is returned.
 */
export async function readCapped(res: Response, max: number, strict: boolean): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      if (strict)
        throw new VoiceProviderError(
          'voice.agent_answer_too_large',
          `the agent API's answer exceeds ${max} bytes; the relay does not read past that`,
        );
      chunks.push(value.subarray(0, value.length - (size - max)));
      break;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
