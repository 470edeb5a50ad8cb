import { DomainError } from '@svc/domain';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CommandReply } from '../bridge/bridge.service';
import { toErrorResponse } from '../common/http/http-errors';
import type { ResultShape } from './mcp-tools';

/*
 * A Device Control answer as an MCP tool result: a screen as compact text (the nodes an agent acts on, one
 * line each), anything else as the phone's JSON; a refusal (the relay's or the
 * phone's) as a tool error whose text is the refusal, so the agent can tell its user why.
 */

/** A node's text is cut here (a screen can hold a whole article): the agent reads more with android_describe_node. */
const MAX_TEXT = 300;

export function toolResult(shape: ResultShape, reply: CommandReply): CallToolResult {
  const body = reply.body;
  // `ok: false` whatever the phone wrote: a tool's outputSchema tells a refusal by it (mcp-screenshot.ts).
  if (reply.status >= 300) return refused(phoneRefusal(body), { ...body, ok: false, status: reply.status });
  switch (shape) {
    case 'screen':
      return text(screenText(body));
    case 'nodes':
      return text(nodesText(body));
    case 'screenshot':
      // Scaled and encoded asynchronously, with the session's image space: mcp-screenshot.ts.
      throw new Error('a screenshot is answered by screenshotResult');
    case 'tree':
    case 'wait':
      // Composed of several commands: mcp-elements.ts.
      throw new Error('an element tool is answered by elementCall');
    case 'json':
      return text(JSON.stringify(body));
  }
}

/** A refusal on the relay's side, as the HTTP routes would answer it; anything else is not the agent's to read. */
export function errorResult(err: unknown): CallToolResult | null {
  if (!(err instanceof DomainError)) return null;
  // The HTTP body itself (its extras, never the status line's reason phrase).
  return refused(err.message, toErrorResponse(err).body);
}

function refused(message: string, body: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }], structuredContent: body };
}

function text(s: string): CallToolResult {
  return { content: [{ type: 'text', text: s }] };
}

function phoneRefusal(body: Record<string, unknown>): string {
  for (const k of ['error', 'message', 'reason']) if (typeof body[k] === 'string' && body[k]) return body[k];
  return `the phone refused: ${JSON.stringify(body)}`;
}

type Node = Record<string, unknown>;

/** `/screen`'s ScreenContent: a header line, then one line per node an agent can use. */
export function screenText(body: Record<string, unknown>): string {
  const nodes = Array.isArray(body.nodes) ? (body.nodes as Node[]) : [];
  const app = typeof body.packageName === 'string' ? body.packageName : 'an unknown app';
  const head = `${app}: ${nodes.length} nodes${body.truncated === true ? ' (truncated by the phone)' : ''}`;
  return [head, ...nodeLines(nodes)].join('\n');
}

/** `/find_nodes`: its matches, as screen lines. */
export function nodesText(body: Record<string, unknown>): string {
  const nodes = Array.isArray(body.matches) ? (body.matches as Node[]) : Array.isArray(body.nodes) ? (body.nodes as Node[]) : [];
  return [`${nodes.length} matching nodes`, ...nodeLines(nodes)].join('\n');
}

const FLAGS = ['clickable', 'longClickable', 'editable', 'scrollable', 'focused', 'selected'] as const;

function nodeLines(nodes: Node[]): string[] {
  const out: string[] = [];
  let layout = 0;
  for (const n of nodes) {
    const flags: string[] = FLAGS.filter((f) => n[f] === true);
    if (n.enabled === false) flags.push('disabled');
    const words = [str(n.text), str(n.contentDescription)];
    // Containers with nothing to read or do are left out (their children carry what matters).
    if (!words[0] && !words[1] && flags.length === 0) {
      layout++;
      continue;
    }
    const parts = [`[${String(n.nodeId ?? '?')}]`, shortClass(n.className)];
    if (words[0]) parts.push(JSON.stringify(cut(words[0])));
    if (words[1] && words[1] !== words[0]) parts.push(`(${cut(words[1])})`);
    const id = str(n.viewId) ?? str(n.viewIdResourceName);
    if (id) parts.push(`#${id.slice(id.lastIndexOf('/') + 1)}`);
    if (flags.length) parts.push(flags.join(' '));
    // Bounds the phone zeroed (include_bounds off) say nothing.
    const b = n.bounds as Record<string, number> | undefined;
    if (b && (b.right > b.left || b.bottom > b.top)) parts.push(`@${b.left},${b.top}-${b.right},${b.bottom}`);
    out.push(parts.join(' '));
  }
  if (layout > 0) out.push(`(${layout} layout nodes with no text or action left out)`);
  return out;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const cut = (s: string): string => (s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s);
const shortClass = (v: unknown): string => (typeof v === 'string' && v ? v.slice(v.lastIndexOf('.') + 1) : 'node');
