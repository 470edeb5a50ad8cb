import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CliError, EXIT, line, type CliIo } from './io';
import { relayEndpoint } from './relay-client';

/**
 * `svc relay mcp`: an MCP server on stdin/stdout for clients that only launch local processes (desktop
 * apps' `mcpServers`). It is a pipe, not a second server: every JSON-RPC message goes to the running relay's
 * `/mcp` (Streamable HTTP, the SDK's client transport) and every answer comes back, so the tools, their
 * schemas, the safety pipeline, the record (`via: mcp` and the desktop client's own name, from its
 * initialize) and elicitation are the relay's, with nothing to keep in step here. The token comes from
 * the environment (MOBILE_BRIDGE_TOKEN, as the host's tools read it, or SVC_RELAY_TOKEN), never argv.
 * Only JSON-RPC is written to stdout; what goes wrong is said on stderr.
 */
export async function mcpCommand(args: string[], io: CliIo): Promise<number> {
  if (args.length > 0) throw new CliError(`unexpected argument "${args[0]}" (the relay is named by RELAY_HOST and RELAY_PORT)`, EXIT.usage);
  const token = io.env.MOBILE_BRIDGE_TOKEN || io.env.SVC_RELAY_TOKEN;
  if (!token) throw new CliError('set MOBILE_BRIDGE_TOKEN (or SVC_RELAY_TOKEN) to a relay session token with the bridge grant');
  const endpoint = relayEndpoint(io.env);
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const say = (s: string) => line(io.stderr, `svc relay mcp: ${s}`);
  const local = new StdioServerTransport();
  const relay = new RelayLink(
    () => new StreamableHTTPClientTransport(new URL('/mcp', endpoint.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    (msg) => void local.send(msg),
    say,
  );
  local.onmessage = (msg) => {
    // The transport has said what went wrong (onerror); a request the relay refused is answered here, so the client is not left waiting.
    relay.send(msg).catch((err: Error) => {
      if ('id' in msg && 'method' in msg) void local.send({ jsonrpc: '2.0', id: msg.id, error: { code: -32000, message: refusalText(err) } });
    });
  };
  local.onerror = (err) => say(err.message);

  const closed = new Promise<void>((resolve) => {
    local.onclose = resolve;
    io.signal?.addEventListener('abort', () => resolve(), { once: true });
    // The client closing stdin is the end of the session.
    process.stdin.once('end', () => resolve());
  });
  await relay.start();
  await local.start();
  await closed;
  await relay.end();
  await local.close();
  return EXIT.ok;
}

type Upstream = Transport & { setProtocolVersion(v: string): void; terminateSession(): Promise<void> };

/**
 * The relay side of the pipe. A session the relay ended (idle for an hour, the relay restarted) answers
 * 404; the desktop client cannot know that, so the link opens a new session with the client's own
 * initialize (its name and capabilities again) and sends the message again: a desktop app left open for
 * days keeps working.
 */
class RelayLink {
  private upstream: Upstream;
  private init: JSONRPCMessage | null = null;
  private reopening: Promise<void> | null = null;
  private readonly own = new Map<string, (m: JSONRPCMessage) => void>();
  private reopens = 0;

  constructor(
    private readonly open: () => Upstream,
    private readonly deliver: (m: JSONRPCMessage) => void,
    private readonly say: (s: string) => void,
  ) {
    this.upstream = this.wire(open());
  }

  start(): Promise<void> {
    return this.upstream.start();
  }

  async send(msg: JSONRPCMessage): Promise<void> {
    if ('method' in msg && msg.method === 'initialize') this.init = msg;
    const via = this.upstream;
    try {
      await via.send(msg);
    } catch (err) {
      if ((err as { code?: unknown }).code !== 404 || !this.init || msg === this.init) throw err;
      if (via === this.upstream) await (this.reopening ??= this.reopen().finally(() => (this.reopening = null)));
      else await this.reopening;
      await this.upstream.send(msg);
    }
  }

  /** Frees the relay's session at once instead of leaving it to expire. */
  async end(): Promise<void> {
    await this.upstream.terminateSession().catch(() => undefined);
    await this.upstream.close();
  }

  private wire(t: Upstream): Upstream {
    t.onmessage = (msg) => {
      // The relay checks MCP-Protocol-Version on every later request; the SDK's Client sets it the same way.
      if ('result' in msg && typeof (msg.result as { protocolVersion?: unknown }).protocolVersion === 'string')
        t.setProtocolVersion((msg.result as { protocolVersion: string }).protocolVersion);
      const mine = 'id' in msg && !('method' in msg) ? this.own.get(String(msg.id)) : undefined;
      if (mine) return mine(msg);
      if (t === this.upstream) this.deliver(msg);
    };
    t.onerror = (err) => {
      if (t !== this.upstream) return;
      const status = (err as { code?: unknown }).code;
      this.say(typeof status === 'number' && status > 0 ? `HTTP ${status}: ${refusalText(err)}` : err.message);
    };
    return t;
  }

  private async reopen(): Promise<void> {
    this.say('the relay ended this MCP session (idle, or restarted): opening a new one');
    const old = this.upstream;
    this.upstream = this.wire(this.open());
    void old.close().catch(() => undefined);
    await this.upstream.start();
    const id = `svc-relay-mcp-reopen-${++this.reopens}`;
    const answer = new Promise<JSONRPCMessage>((resolve, reject) => {
      this.own.set(id, resolve);
      setTimeout(() => reject(new Error('the relay did not answer a new initialize within 30 s')), 30_000).unref();
    }).finally(() => this.own.delete(id));
    await this.upstream.send({ ...(this.init as JSONRPCMessage & { id: string | number }), id });
    const a = await answer;
    if ('error' in a) throw new Error(`the relay refused a new session: ${a.error.message}`);
    await this.upstream.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }
}

/** The relay's own words for a refusal (`{"ok":false,"error":...}` inside the SDK's message), else the message. */
function refusalText(err: Error): string {
  const from = err.message.indexOf('{');
  const to = err.message.lastIndexOf('}');
  try {
    const body = from >= 0 && to > from ? (JSON.parse(err.message.slice(from, to + 1)) as { error?: unknown; code?: unknown }) : null;
    if (body && typeof body.error === 'string') return `the relay refused: ${body.error}${typeof body.code === 'string' ? ` (${body.code})` : ''}`;
  } catch {
    // not the relay's JSON
  }
  return err.message;
}
