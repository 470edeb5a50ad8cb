import type { Logger } from 'pino';
import { redactUrl, redactUrlsIn } from '../common/redact-url';

export type UpdateCheck = {
  current: string;
  latest: string | null;
  update_available: boolean;
  update_command: string | null;
  status: 'current' | 'behind' | 'unknown';
  error?: string;
};

const MAX_FEED_BYTES = 64 * 1024;
const FEED_TIMEOUT_MS = 5000;
const VERSION_RE = /^\d+(?:\.\d+){0,3}(?:[-+][\w.]+)?$/;

/**
 * Reads the update feed (`RELAY_UPDATE_FEED_URL`, a JSON object `{latest, update_command?}`): 5 s, 64 KiB
 * at most. The feed URL may carry credentials (`user:pass@`, sent as HTTP Basic; a token in the query):
 * nothing this returns or logs shows them. The error a caller (a paired phone too) sees names what went
 * wrong, never the URL; the operator's log names the URL with its userinfo and query values redacted.
 */
export async function readUpdateFeed(feed: string, current: string, logger: Logger): Promise<UpdateCheck> {
  const failed = (why: string): UpdateCheck => {
    logger.warn({ feed: redactUrl(feed), reason: redactUrlsIn(why) }, 'update check failed');
    return {
      current,
      latest: null,
      update_available: false,
      update_command: null,
      status: 'unknown',
      error: redactUrlsIn(`update check failed: ${why}`).slice(0, 200),
    };
  };
  let url: URL;
  try {
    url = new URL(feed);
  } catch {
    return failed('the feed URL is not a URL');
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  if (url.username || url.password) {
    const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(user).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  let text: string;
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(FEED_TIMEOUT_MS) });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      return failed(`the feed answered ${res.status}`);
    }
    text = await readBounded(res);
  } catch (err) {
    const e = err as Error & { cause?: { code?: unknown } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return failed(`the feed did not answer within ${FEED_TIMEOUT_MS / 1000} s`);
    const code = typeof e.cause?.code === 'string' ? e.cause.code : null;
    // The network error's own text may quote the URL: only its code goes out.
    return failed(`the feed could not be reached${code ? ` (${code})` : ''}`);
  }
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch {
    return failed('the feed is not JSON');
  }
  if (typeof j !== 'object' || j === null || Array.isArray(j)) return failed('the feed is not a JSON object');
  const { latest, update_command: command } = j as { latest?: unknown; update_command?: unknown };
  if (typeof latest !== 'string' || !VERSION_RE.test(latest)) return failed('the feed has no "latest" version');
  const newer = compareVersions(latest, current) > 0;
  return {
    current,
    latest,
    update_available: newer,
    update_command: newer && typeof command === 'string' ? command.slice(0, 300) : null,
    status: newer ? 'behind' : 'current',
  };
}

/** The body, at most MAX_FEED_BYTES of it (a larger feed is cut and then fails as JSON). */
async function readBounded(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    const b = Buffer.from(chunk as Uint8Array);
    chunks.push(b);
    size += b.length;
    if (size >= MAX_FEED_BYTES) break;
  }
  return Buffer.concat(chunks).subarray(0, MAX_FEED_BYTES).toString('utf8');
}

/** Dotted numeric versions compared part by part (a pre-release suffix sorts before its release). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [main, pre] = v.split(/[-+]/, 2);
    return { parts: main.split('.').map((x) => Number(x) || 0), pre: pre !== undefined && v.includes('-') };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.parts.length, y.parts.length); i++) {
    const d = (x.parts[i] ?? 0) - (y.parts[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return x.pre === y.pre ? 0 : x.pre ? -1 : 1;
}
