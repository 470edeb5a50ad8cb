import { readAgentAnswer, type AgentToolEvent } from './agent-answer';

/** A response whose body arrives in the given pieces. */
function streamed(pieces: string[], type = 'text/event-stream'): Response {
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of pieces) c.enqueue(enc.encode(p));
      c.close();
    },
  });
  return new Response(body, { headers: { 'content-type': type } });
}

const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\n`;

describe('readAgentAnswer', () => {
  it("joins the streamed answer and reports the agent's tool calls, whatever the chunking and line endings", async () => {
    const sse = [
      chunk('It is '),
      'event: hermes.tool.progress\r\ndata: {"tool":"terminal","label":"ls\\n-la","toolCallId":"c1","status":"running"}\r\n\r\n',
      'event: hermes.tool.progress\ndata: {"tool":"_thinking","status":"running"}\n\n',
      ': keepalive\n\n',
      'event: hermes.tool.progress\ndata: {"tool":"terminal","toolCallId":"c1","status":"completed"}\n\n',
      'event: hermes.tool.progress\ndata: {"tool":"read_file"}\n\n',
      chunk('sunny.'),
      'data: [DONE]\n\n',
    ].join('');
    const pieces: string[] = [];
    for (let i = 0; i < sse.length; i += 7) pieces.push(sse.slice(i, i + 7));
    const tools: AgentToolEvent[] = [];
    expect(await readAgentAnswer(streamed(pieces), 1 << 20, (e) => tools.push(e))).toBe('It is sunny.');
    expect(tools).toEqual([
      { phase: 'started', name: 'terminal', callId: 'c1', label: 'ls -la' },
      { phase: 'completed', name: 'terminal', callId: 'c1', label: null },
      { phase: 'started', name: 'read_file', callId: null, label: null },
    ]);
  });

  it('reads a plain JSON completion too, and refuses a stream past the cap, an error mid-answer, or no answer', async () => {
    const json = streamed([JSON.stringify({ choices: [{ message: { content: 'plain' } }] })], 'application/json');
    expect(await readAgentAnswer(json, 1 << 20, () => undefined)).toBe('plain');
    await expect(readAgentAnswer(streamed([chunk('x'.repeat(5000))]), 1024, () => undefined)).rejects.toMatchObject({
      code: 'voice.agent_answer_too_large',
    });
    await expect(readAgentAnswer(streamed([chunk('a'), 'data: {"error":{"message":"boom"}}\n\n']), 1 << 20, () => undefined)).rejects.toMatchObject({
      code: 'voice.agent_error',
    });
    await expect(readAgentAnswer(streamed(['data: [DONE]\n\n']), 1 << 20, () => undefined)).rejects.toMatchObject({ code: 'voice.agent_error' });
    // Frames that are not JSON objects, or nest too deep, are skipped.
    const odd = streamed(['data: null\n\n', `data: ${'['.repeat(500)}\n\n`, chunk('ok'), 'data: [DONE]\n\n']);
    expect(await readAgentAnswer(odd, 1 << 20, () => undefined)).toBe('ok');
  });
});
