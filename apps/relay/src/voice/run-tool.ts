import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export type ToolRun = { stdout: Buffer; stderr: string };

/** The program ran past its time bound and was killed. */
export class ToolTimeoutError extends Error {}

/** Finds a program in `dir` or on the PATH (null when absent), without running a shell. */
export function findProgram(name: string, dir: string | null, envPath = process.env.PATH ?? ''): string | null {
  const dirs = dir ? [dir] : envPath.split(path.delimiter).filter(Boolean);
  for (const d of dirs) {
    const p = path.join(d, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Runs a program (never a shell) with bounded time and output: past `timeoutMs` it is killed (SIGKILL) and
 * the call fails; past `maxStdout` bytes likewise. `input` is written to its stdin. A non-zero exit fails
 * with the last lines of its stderr.
 */
export function runTool(file: string, args: string[], opts: { input?: Buffer | string; timeoutMs: number; maxStdout: number }): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' } });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let failed: Error | null = null;
    const fail = (e: Error) => {
      if (failed) return;
      failed = e;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () => fail(new ToolTimeoutError(`${path.basename(file)} took longer than ${Math.round(opts.timeoutMs / 1000)} s and was stopped`)),
      opts.timeoutMs,
    );
    child.stdout.on('data', (d: Buffer) => {
      outBytes += d.length;
      if (outBytes > opts.maxStdout) return fail(new Error(`${path.basename(file)} produced more than ${opts.maxStdout} bytes`));
      out.push(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString('utf8')).slice(-8192); // the end is where a failure is said
    });
    child.on('error', (e) => fail(e));
    child.stdin.on('error', () => undefined); // a program that exits before reading all its input
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (failed) return reject(failed);
      if (code !== 0) {
        const tail = err.trim().split('\n').slice(-3).join(' | ').slice(0, 400);
        return reject(new Error(`${path.basename(file)} exited ${code ?? signal}${tail ? `: ${tail}` : ''}`));
      }
      resolve({ stdout: Buffer.concat(out), stderr: err });
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}
