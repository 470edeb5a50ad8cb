import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CliError, EXIT, line, type CliIo } from './io';
import { relayEndpoint } from './pair';

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
  const local = new StdioServerTransport();
  const relay = new StreamableHTTPClientTransport(new URL('/mcp', endpoint.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const say = (s: string) => line(io.stderr, `svc relay mcp: ${s}`);

  local.onmessage = (msg) => {
    // The transport has said what went wrong (onerror); a request the relay refused is answered here, so the client is not left waiting.
    relay.send(msg).catch((err: Error) => {
      if ('id' in msg && 'method' in msg) void local.send({ jsonrpc: '2.0', id: msg.id, error: { code: -32000, message: refusalText(err) } });
    });
  };
  relay.onmessage = (msg: JSONRPCMessage) => {
    // The relay checks MCP-Protocol-Version on every later request; the SDK's Client would set it the same way.
    if ('result' in msg && typeof (msg.result as { protocolVersion?: unknown }).protocolVersion === 'string')
      relay.setProtocolVersion((msg.result as { protocolVersion: string }).protocolVersion);
    void local.send(msg);
  };
  relay.onerror = (err) => {
    const status = (err as { code?: unknown }).code;
    say(typeof status === 'number' && status > 0 ? `HTTP ${status}: ${refusalText(err)}` : err.message);
  };
  local.onerror = (err) => say(err.message);

  const closed = new Promise<void>((resolve) => {
    local.onclose = resolve;
    relay.onclose = resolve;
    io.signal?.addEventListener('abort', () => resolve(), { once: true });
    // The client closing stdin is the end of the session.
    process.stdin.once('end', () => resolve());
  });
  await relay.start();
  await local.start();
  await closed;
  // Frees the relay's session at once instead of leaving it to expire.
  await relay.terminateSession().catch(() => undefined);
  await relay.close();
  await local.close();
  return EXIT.ok;
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
