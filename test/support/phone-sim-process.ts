import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, ROOT } from './dist';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { nextCode, registerCode, type TestRelay } from './harness';

/** `svc phone-sim` as its own process, as an operator runs it: stdin a pipe the test types into, output captured. */
export type SimProcess = {
  child: ChildProcess;
  /** Everything it printed on stdout and stderr so far, in order. */
  output: () => string;
  /** Types lines on its stdin, each ended by a newline. */
  type: (...lines: string[]) => void;
  /** Waits until its output (from `from` on) matches, or fails with what it printed. */
  waitFor: (re: RegExp, from?: number, timeoutMs?: number) => Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

export function spawnSim(args: string[]): SimProcess {
  const child = spawn(process.execPath, [BIN, 'phone-sim', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  // A test that ends the process before typing everything must not fail on the closed pipe.
  child.stdin!.on('error', () => undefined);
  let exitedNow = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      exitedNow = true;
      resolve({ code, signal });
    }),
  );
  const waitFor = async (re: RegExp, from = 0, timeoutMs = 20_000): Promise<RegExpExecArray> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = re.exec(out.slice(from));
      if (hit) return hit;
      if (exitedNow || Date.now() > deadline) throw new Error(`phone-sim did not print ${re} (exited: ${exitedNow})\noutput:\n${out.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { child, output: () => out, type: (...lines) => child.stdin!.write(lines.map((l) => `${l}\n`).join('')), waitFor, exited };
}

/**
 * A simulator in app mode paired with a fresh code against `relay`, its token saved where the test can
 * read it (it never prints it); `sims` collects it for the file's afterAll to kill.
 */
export async function startPairedSim(relay: TestRelay, sims: SimProcess[], args: string[]): Promise<{ sim: SimProcess; token: () => string }> {
  const code = nextCode();
  const registered = await registerCode(relay, code);
  if (registered.status !== 200) throw new Error(`register ${code}: ${registered.status}`);
  const tokenFile = path.join(relay.home, `token-${code}`);
  const sim = spawnSim(['--relay', relay.url.replace('http', 'ws'), '--code', code, '--mode', 'app', '--save-token', tokenFile, '--quiet', ...args]);
  sims.push(sim);
  return { sim, token: () => fs.readFileSync(tokenFile, 'utf8').trim() };
}
