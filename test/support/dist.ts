import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
// The build's own rule for "is dist/ current" and its steps (package.json "build", "prestart").
import { buildParts, staleParts } from '../../scripts/build-if-stale';
import { rememberOperatorKey } from './operator-keys';

export const ROOT = path.resolve(__dirname, '..', '..');
export const BIN = path.join(ROOT, 'bin', 'svc');
/**
 * Tests that spawn `bin/svc` need dist/. `npm test` builds first; a single file run from an editor
 * builds here when the relay's inputs changed since the last build (the rule `npm start` uses:
 * scripts/build-if-stale.js), serialised by a lock directory.
 */
export function ensureBuilt(): void {
  const stale = () => staleParts(ROOT, ['relay']).length > 0;
  if (!stale()) return;
  const lock = path.join(ROOT, 'dist.build-lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${lock} held for 2 minutes; remove it if no build runs`);
      execFileSync('sleep', ['0.2']);
    }
  }
  try {
    if (stale()) buildParts(ROOT, ['relay']);
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

export type SvcProcess = {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/** Runs `bin/svc <args>` as a real process (stdin closed, output captured); `wrapper` runs it (a sandbox, setpriv...). */
export function spawnSvc(args: string[], env: NodeJS.ProcessEnv, wrapper: string[] = []): SvcProcess {
  const [command, ...rest] = [...wrapper, process.execPath, BIN, ...args];
  const child = spawn(command, rest, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Waits until `pick` finds something in the process's stderr, or fails with what it printed. */
export async function waitForOutput<T>(p: SvcProcess, pick: (stderr: string) => T | null | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void p.exited.then(() => (exited = true));
  for (;;) {
    const hit = pick(p.stderr());
    if (hit) return hit;
    if (exited || Date.now() > deadline) {
      throw new Error(`svc did not print what was expected (exited: ${exited})\nstderr:\n${p.stderr()}\nstdout:\n${p.stdout().slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Starts `svc relay start` on an ephemeral loopback port and resolves with its base URL. */
export async function startRelayProcess(
  home: string,
  env: NodeJS.ProcessEnv = {},
  flags: string[] = [],
  wrapper: string[] = [],
): Promise<SvcProcess & { url: string }> {
  const p = spawnSvc(
    ['relay', 'start', ...flags],
    { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'INFO', ...env },
    wrapper,
  );
  // The start-up banner is several writes (listening, the event log, the environment file, the console):
  // wait for the console line, the last that every start prints.
  const url = await waitForOutput(p, (s) => (/^console /m.test(s) ? /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(s)?.[1] : undefined));
  rememberOperatorKey(url, home);
  return { ...p, url };
}
