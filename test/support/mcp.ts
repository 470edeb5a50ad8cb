import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestRelay } from './harness';

export type McpOptions = {
  name?: string;
  /** The client's user answering elicitation/create (the client then declares the capability). */
  elicit?: (message: string) => ElicitResult | Promise<ElicitResult>;
  headers?: Record<string, string>;
  /** The transport's fetch (test/support/elsewhere.ts `fetchFrom`: the client on another machine). */
  fetch?: typeof fetch;
};

/** The MCP SDK's own client over Streamable HTTP, on `/mcp` with a session bearer. */
export async function mcpConnect(
  relay: TestRelay,
  token: string,
  opts: McpOptions = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: opts.name ?? 'e2e-agent', version: '1.0.0' }, { capabilities: opts.elicit ? { elicitation: { form: {} } } : {} });
  if (opts.elicit) {
    const elicit = opts.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (req) => elicit(req.params.message));
  }
  const transport = new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...opts.headers } },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  await client.connect(transport);
  return { client, transport };
}

/** A tool call's first text. */
export function textOf(r: unknown): string {
  const c = (r as CallToolResult).content.find((x) => x.type === 'text');
  return c && c.type === 'text' ? c.text : '';
}

/** A raw JSON-RPC POST to `/mcp` (what no SDK client would send), answered as status, headers and parsed body. */
export async function mcpPost(
  relay: TestRelay,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${relay.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // an event stream, kept as text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export const initializeBody = (id = 1, capabilities: Record<string, unknown> = {}) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '0' } },
  });
