import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isConsoleUrl } from './console-url';

/**
 * The console opened from another machine (its LAN address, a proxy, a foreign Host) is refused with the
 * same 403 as ever; a browser navigating there (`Accept: text/html`) reads that refusal as a short page
 * saying where the console is, instead of a line of JSON. API calls and scripts keep the JSON error.
 */

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:3rem 1.5rem;background:#f6f7f9;color:#1c2330}' +
  'main{max-width:40rem;margin:0 auto}h1{font-size:1.4rem;margin:0 0 1rem}code{font:.95em ui-monospace,monospace;' +
  'background:#e8ebf0;padding:.1em .35em;border-radius:4px}.why{color:#5b6577}' +
  '@media (prefers-color-scheme:dark){body{background:#0c1016;color:#e4e8ef}code{background:#1c2430}.why{color:#9aa5b5}}';

/** Nothing runs and nothing loads: one inline style allowed by its hash, no script, no framing. */
const CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The page for a refused navigation; `reason` is the refusal's own sentence, `port` the relay's. */
export function loopbackRefusalPage(reason: string, port: number): string {
  const local = `http://127.0.0.1:${port}/console/`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>svc relay console: loopback only</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>The svc relay console answers only on the relay's own machine</h1>
<p>It was not opened here because it is loopback-only: other machines, proxies and other web pages cannot reach it.</p>
<p class="why">Refused: ${escapeHtml(reason)}.</p>
<p>On the machine that runs the relay, open <code>${local}</code>: run <code>svc relay console</code> there for a one-time sign-in link.</p>
<p>From another computer, forward the port over SSH first: <code>ssh -L ${port}:127.0.0.1:${port} &lt;relay host&gt;</code>, then open <code>${local}</code> on this computer with the link <code>svc relay console</code> prints on the relay's machine.</p>
</main>
</body>
</html>
`;
}

/** A top-level page of the console (not its API), asked for by a browser that wants HTML. */
function isConsolePageNavigation(req: FastifyRequest): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (!isConsoleUrl(req.url) || req.url.startsWith('/console/api/') || req.url === '/console/api') return false;
  return /\btext\/html\b/i.test(String(req.headers.accept ?? ''));
}

/** Turns the JSON body of a `auth.loopback_only` refusal of a console page into the page above (status kept). */
export function installLoopbackRefusalPage(fastify: FastifyInstance): void {
  fastify.addHook('onSend', (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload?: unknown) => void) => {
    if (reply.statusCode !== 403 || typeof payload !== 'string' || !isConsolePageNavigation(req)) return done(null, payload);
    let body: { code?: unknown; error?: unknown };
    try {
      body = JSON.parse(payload) as { code?: unknown; error?: unknown };
    } catch {
      return done(null, payload);
    }
    if (body?.code !== 'auth.loopback_only') return done(null, payload);
    void reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store');
    done(null, loopbackRefusalPage(typeof body.error === 'string' ? body.error : 'this console is loopback-only', req.socket.localPort ?? 8767));
  });
}
