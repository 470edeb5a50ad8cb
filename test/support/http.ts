import type { Relay } from '../../apps/relay/src/relay';

export type Json = Record<string, any>;

/** A JSON request to the relay (from 127.0.0.1: loopback unless a proxy header says otherwise). */
export async function call(
  relay: Relay,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
}

/** A caller the relay must not treat as loopback: the request came through a proxy. */
export const REMOTE: Readonly<Record<string, string>> = { 'x-forwarded-for': '203.0.113.7' };
