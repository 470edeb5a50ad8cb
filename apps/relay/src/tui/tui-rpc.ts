import { DomainError } from '@svc/domain';

/*
 * The `tui` channel's JSON-RPC 2.0 lines (WIRE.md): what a phone may write to the gateway's stdin, and
 * how a line the gateway writes is read. One line either way is at most MAX_LINE_BYTES.
 */

/** One JSON-RPC line either way is at most this long; longer stdout lines are dropped (and counted). */
export const MAX_LINE_BYTES = 1024 * 1024;
/** JSON-RPC error codes of the answers the relay gives itself: server error, invalid request. */
export const RPC_UNAVAILABLE = -32000;
export const RPC_INVALID = -32600;

export type RpcId = string | number;

const TAG_RE = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

/** A `tui.rpc.request` payload: one JSON-RPC 2.0 object (request, notification or a reply to the gateway). */
export function rpcLine(p: Record<string, unknown>): string {
  const isCall = typeof p.method === 'string' && p.method.length > 0 && p.method.length <= 256;
  const isReply = 'id' in p && ('result' in p || 'error' in p);
  if (!isCall && !isReply) {
    throw new DomainError('tui.bad_request', 'invalid', 'payload: a JSON-RPC 2.0 object with "method" (or a reply with "id" and "result"/"error")');
  }
  if (p.id !== undefined && p.id !== null && typeof p.id !== 'string' && typeof p.id !== 'number') {
    throw new DomainError('tui.bad_request', 'invalid', 'id: a string or a number');
  }
  const line = JSON.stringify({ jsonrpc: '2.0', ...p }) + '\n';
  if (Buffer.byteLength(line) > MAX_LINE_BYTES)
    throw new DomainError('tui.too_large', 'too_large', `a JSON-RPC line is at most ${MAX_LINE_BYTES} bytes`);
  return line;
}

/** An attach option (`profile`, `resume_session_id`): absent, or a tag the gateway's environment may carry. */
export function attachTag(v: unknown, name: string): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || !TAG_RE.test(v)) throw new DomainError('tui.bad_attach', 'invalid', `${name}: up to 128 of A-Z a-z 0-9 . _ : @ -`);
  return v;
}

/** A line the gateway wrote: an event (`method`), a response (`id` with `result` or `error`), or something to drop. */
export type GatewayLine =
  | { kind: 'blank' }
  | { kind: 'event'; msg: Record<string, unknown> }
  | { kind: 'response'; msg: Record<string, unknown>; id: RpcId | null }
  | { kind: 'not_an_object'; bytes: number }
  | { kind: 'unknown' };

export function readGatewayLine(line: string): GatewayLine {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (text.trim() === '') return { kind: 'blank' };
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    msg = null;
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return { kind: 'not_an_object', bytes: text.length };
  const o = msg as Record<string, unknown>;
  if (typeof o.method === 'string') return { kind: 'event', msg: o };
  if ('id' in o && ('result' in o || 'error' in o))
    return { kind: 'response', msg: o, id: typeof o.id === 'string' || typeof o.id === 'number' ? o.id : null };
  return { kind: 'unknown' };
}
