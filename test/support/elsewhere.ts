import * as http from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

/**
 * Requests from another machine, as the relay sees them: a real TCP peer that is not a loopback address.
 * Linux routes all of 127.0.0.0/8 to `lo`, so binding the client's side to 127.0.0.2 gives the relay a
 * peer other than 127.0.0.1/::1 without a second host (no forwarding header, no mock).
 */
export const ELSEWHERE = '127.0.0.2';

/** A `fetch` whose connections leave from `localAddress` (the MCP SDK's transport takes one as its `fetch`). */
export function fetchFrom(localAddress = ELSEWHERE): typeof fetch {
  return ((input: string | URL | Request, init: RequestInit = {}) =>
    new Promise<Response>((resolve, reject) => {
      const u = new URL(input instanceof Request ? input.url : String(input));
      const method = init.method ?? 'GET';
      const req = http.request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname + u.search,
          method,
          headers: Object.fromEntries(new Headers(init.headers).entries()),
          localAddress,
          // One connection per request: a kept-alive socket would hold the relay's close open.
          agent: false,
        },
        (res) => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
          const status = res.statusCode ?? 500;
          const empty = method === 'HEAD' || status === 204 || status === 304;
          if (empty) res.resume();
          const body = empty ? null : (Readable.toWeb(res) as WebReadableStream<Uint8Array> as unknown as ReadableStream<Uint8Array>);
          resolve(new Response(body, { status, statusText: res.statusMessage, headers }));
        },
      );
      init.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')), { once: true });
      req.on('error', reject);
      if (typeof init.body === 'string') req.write(init.body);
      req.end();
    })) as typeof fetch;
}

/** A JSON request from another machine: status, reason phrase and parsed body. */
export async function callFrom(
  url: string,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; statusText: string; body: Record<string, any> }> {
  const res = await fetchFrom()(`${url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, statusText: res.statusText, body: text ? JSON.parse(text) : {} };
}
