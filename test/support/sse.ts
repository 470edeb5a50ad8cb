/** A real SSE client over fetch: parses `id`/`event`/`data` blocks and awaits them with timeouts. */
export type SseMessage = { id?: string; event: string; data: string };

export class SseClient {
  readonly messages: SseMessage[] = [];
  comments = 0;
  status = 0;
  private waiters: Array<() => void> = [];
  private readonly abort = new AbortController();
  ended = false;

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const c = new SseClient();
    const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: c.abort.signal });
    c.status = res.status;
    if (!res.ok || !res.body) {
      c.ended = true;
      return c;
    }
    void c.pump(res.body);
    return c;
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let at: number;
        while ((at = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, at);
          buf = buf.slice(at + 2);
          const msg: SseMessage = { event: 'message', data: '' };
          let isComment = true;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            isComment = false;
            const [k, ...rest] = line.split(':');
            const v = rest.join(':').replace(/^ /, '');
            if (k === 'id') msg.id = v;
            else if (k === 'event') msg.event = v;
            else if (k === 'data') msg.data += (msg.data ? '\n' : '') + v;
          }
          if (isComment) this.comments++;
          else if (msg.data !== '' || msg.id !== undefined) this.messages.push(msg);
          for (const w of this.waiters.splice(0)) w();
        }
      }
    } catch {
      // aborted
    } finally {
      this.ended = true;
      for (const w of this.waiters.splice(0)) w();
    }
  }

  /** Stored events received so far (the default `message` events), parsed. */
  events(): Array<{ seq: number; type: string; actor: string; data: Record<string, unknown> }> {
    return this.messages.filter((m) => m.event === 'message').map((m) => JSON.parse(m.data));
  }

  async until(pred: (c: SseClient) => boolean, timeoutMs = 3000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this)) {
      if (this.ended) throw new Error(`stream ended before the condition held; got ${JSON.stringify(this.messages.slice(-5))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`condition not met within ${timeoutMs} ms; got ${JSON.stringify(this.messages.slice(-5))}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  close(): void {
    this.abort.abort();
  }
}
