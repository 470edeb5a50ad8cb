import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { SpeechAborted } from './speech-gate';

/** The job's wall-clock bound passed and the program was killed. */
export class SpeechTimeout extends Error {}

/** The program exited non-zero; `stderr` (its tail) is for the relay's debug log only, never a client. */
export class SpeechFailed extends Error {
  constructor(
    readonly program: string,
    readonly exit: string,
    readonly stderr: string,
  ) {
    super(`${program} exited ${exit}`);
  }
}

export type SpeechRun = {
  stdout: Readable;
  /** Resolves with the stderr tail on exit 0; rejects with the reason it was killed, or SpeechFailed. */
  finished: Promise<string>;
  kill(reason: Error): void;
};

/**
 * One speech program (ffmpeg, lame, pocketsphinx), never through a shell, with no stdin, a clean
 * environment, and SIGKILL when `timeoutMs` passes, when `signal` aborts (the client left) or when the
 * caller kills it (too much output). The caller reads `stdout` (or drains it) and awaits `finished`.
 */
export function startSpeech(file: string, args: string[], opts: { timeoutMs: number; signal?: AbortSignal }): SpeechRun {
  const program = path.basename(file);
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' } });
  let killedFor: Error | null = null;
  const kill = (reason: Error) => {
    if (killedFor) return;
    killedFor = reason;
    child.kill('SIGKILL');
  };
  const timer = setTimeout(() => kill(new SpeechTimeout(`${program} ran past the time bound`)), Math.max(1, opts.timeoutMs));
  const onAbort = () => kill(new SpeechAborted());
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-4096);
  });
  const finished = new Promise<string>((resolve, reject) => {
    child.on('error', (e) => kill(e));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (killedFor) return reject(killedFor);
      if (code !== 0) return reject(new SpeechFailed(program, String(code ?? signal), stderr.trim()));
      resolve(stderr);
    });
  });
  finished.catch(() => undefined); // the caller awaits it; a rejection before it does is not unhandled
  return { stdout: child.stdout, finished, kill };
}
