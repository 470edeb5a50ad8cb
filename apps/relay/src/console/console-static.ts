import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Strict: no inline script or style, no framing, nothing fetched from anywhere but this origin.
 * `wasm-unsafe-eval` lets the recording player compile its terminal emulator (WebAssembly shipped in the
 * console's own script); it allows no JavaScript eval.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers on every `/console` response, the API's included. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

/** The built console: `RELAY_CONSOLE_DIR`, else `apps/console/dist` above this file (src or dist). */
export function findConsoleDir(configured: string | null): string | null {
  if (configured) return fs.existsSync(path.join(configured, 'index.html')) ? configured : null;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'apps', 'console', 'dist');
    if (fs.existsSync(path.join(candidate, 'index.html'))) return candidate;
    if (fs.existsSync(path.join(dir, 'package.json')) || path.dirname(dir) === dir) return null;
  }
}

export type StaticFile = { body: Buffer; type: string; cache: string };

/**
 * Resolves a request path under `/console/` to a file of the build. Hashed assets are cached for a
 * year; a path without an extension is a client route and gets index.html (never cached, so a new build
 * is picked up at once). Paths are resolved and must stay inside the build directory.
 */
export function resolveConsoleFile(root: string, rel: string): StaticFile | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rel);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const base = fs.realpathSync(root);
  const wanted = path.resolve(base, '.' + path.posix.normalize('/' + decoded));
  if (wanted !== base && !wanted.startsWith(base + path.sep)) return null;
  const ext = path.extname(wanted);
  if (ext === '') return readFile(base, path.join(base, 'index.html'), 'no-cache');
  const cache = decoded.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
  return readFile(base, wanted, cache);
}

function readFile(base: string, file: string, cache: string): StaticFile | null {
  try {
    const real = fs.realpathSync(file);
    if (!real.startsWith(base + path.sep)) return null;
    const fd = fs.openSync(real, 'r');
    try {
      if (!fs.fstatSync(fd).isFile()) return null;
      return { body: fs.readFileSync(fd), type: TYPES[path.extname(real)] ?? 'application/octet-stream', cache };
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
}
