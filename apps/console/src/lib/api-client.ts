import { noteServerTime } from './server-time';
import { markSignedOut } from './sign-in';

export const API_BASE = '/console/api';

/** A refusal from the relay, with its machine code (`reduction_only`, `sessions.not_found`...). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export async function apiGet<T>(path: string, signal?: AbortSignal): Promise<T> {
  return request<T>(path, { method: 'GET', signal });
}

/** Commands are always JSON (the relay refuses anything else: a cross-site form cannot send it). */
export async function apiPost<T>(path: string, body: object = {}): Promise<T> {
  return request<T>(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
}

async function request<T>(path: string, init: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${API_BASE}${path}`, {
      ...init,
      headers: { accept: 'application/json', ...init.headers },
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError('the relay did not answer (is it running?)', 0, 'network');
  }
  let body: Record<string, unknown> | null = null;
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    body = null;
  }
  if (res.status === 401 && body?.code === 'auth.operator_key_required') markSignedOut();
  if (!res.ok || body === null) {
    const message = typeof body?.error === 'string' ? body.error : `${res.status} ${res.statusText || 'error'}`;
    throw new ApiError(message, res.status, typeof body?.code === 'string' ? body.code : `http_${res.status}`);
  }
  noteServerTime(body.server_time);
  return body as T;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return 'something went wrong';
}
