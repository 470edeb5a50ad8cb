import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The compatibility hook's Python module (spec 4.12), written by `svc relay compat install` next to the
 * service home and loaded by a one-line `.pth` in the agent's site-packages. It runs inside the agent's
 * API server process and only fills gaps of older API servers; it never starts the relay, creates relay
 * sessions or unlocks relay features. Its source is `svc_relay_compat.py` beside this file (a real Python
 * file, compiled by Python's own `py_compile` in hook-source.spec.ts); `npm run build` copies it into dist.
 */
export const HOOK_MODULE = 'svc_relay_compat';

/** Where the module's source is read from: beside this file, in the sources and in dist alike. */
export const HOOK_SOURCE_FILE = path.join(__dirname, `${HOOK_MODULE}.py`);

let source: string | undefined;

/** The module's source, read once. */
export function hookSource(): string {
  if (source === undefined) {
    try {
      source = fs.readFileSync(HOOK_SOURCE_FILE, 'utf8');
    } catch (err) {
      throw new Error(`the compatibility hook's module cannot be read (${(err as Error).message}); rebuild the relay with "npm run build"`);
    }
  }
  return source;
}

/** The module's `VERSION = <n>` line: what `compat status` reports and the hook answers as its version. */
export function hookVersion(): number {
  const m = /^VERSION = (\d+)$/m.exec(hookSource());
  if (!m) throw new Error(`${HOOK_SOURCE_FILE} has no "VERSION = <n>" line`);
  return Number(m[1]);
}
