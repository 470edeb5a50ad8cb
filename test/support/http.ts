import type { Relay } from '../../apps/relay/src/relay';
import { operatorHeaderFor } from './operator-keys';

export type Json = Record<string, any>;

/**
 * A JSON request to the relay (from 127.0.0.1: loopback unless a proxy header says otherwise), as the
 * operator's tools make it: with the home's operator key, unless `opts.key` is false (a stranger on loopback).
 */
export async function call(
  relay: Relay,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  opts: { key?: boolean } = {},
): Promise<{ status: number; body: Json }> {
  const key: Record<string, string> =
    opts.key !== false && 'operatorKey' in relay ? { 'x-operator-key': String((relay as { operatorKey: string }).operatorKey) } : {};
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: { ...key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
}

/** A caller the relay must not treat as loopback: the request came through a proxy. */
export const REMOTE: Readonly<Record<string, string>> = { 'x-forwarded-for': '203.0.113.7' };

/**
 * `fetch` as the operator's own tools call the relay: every request to a test relay carries its home's
 * operator key (`X-Operator-Key`), unless the request sets that header itself (`''` sends none: a stranger
 * on loopback). For suites about the operator's surfaces; the key's own refusals are in test/e2e/operator-key.
 */
export const operatorFetch: typeof fetch = (input, init = {}) => {
  const headers = new Headers(init.headers);
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (!headers.has('x-operator-key')) for (const [k, v] of Object.entries(operatorHeaderFor(url))) headers.set(k, v);
  else if (headers.get('x-operator-key') === '') headers.delete('x-operator-key');
  return fetch(input, { ...init, headers });
};
