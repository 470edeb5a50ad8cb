import type { ScanProgress } from '@svc/events';
import { parseArgs } from 'node:util';
/** Where a command reads its environment and writes its output; `processIo()` in production, buffers in tests. */
export type Out = { write(text: string): unknown; isTTY?: boolean };

export type CliIo = {
  stdout: Out;
  stderr: Out;
  env: NodeJS.ProcessEnv;
  /** Long-running commands (`start`, `events tail --follow`) stop when this aborts (SIGINT/SIGTERM in production). */
  signal?: AbortSignal;
  /** What `secrets set` reads a value from (process.stdin when absent). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
};

/** Exit statuses: 0 ok, 1 the command failed (bad config, broken log, no relay...), 2 usage error. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A wrong command line: the caller prints the usage of `command` on stderr and exits 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A failure with a message meant for the operator (no stack trace): printed on stderr, exit 1. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export function line(out: Out, text = ''): void {
  out.write(text + '\n');
}

/**
 * Progress of a long scan on a terminal: one line (`verifying 58%  seq 1,234,567`) redrawn at most every
 * 200 ms and erased when done. Nothing at all when the stream is not a terminal: scripts read the result.
 */
export function progressLine(out: Out, label: string, now: () => number = Date.now): { update: (p: ScanProgress) => void; done: () => void } {
  if (!out.isTTY) return { update: () => undefined, done: () => undefined };
  let last = -Infinity;
  let shown = false;
  return {
    update: (p) => {
      const t = now();
      if (t - last < 200) return;
      last = t;
      shown = true;
      const pct = p.total > 0 ? Math.floor((p.done * 100) / p.total) : 0;
      out.write(`\r${label} ${pct}%  seq ${p.seq.toLocaleString('en-US')}\x1b[K`);
    },
    done: () => {
      if (shown) out.write('\r\x1b[K');
    },
  };
}

/** ANSI colour only on a terminal (and never when NO_COLOR is set). */
export function colours(out: Out, env: NodeJS.ProcessEnv) {
  const on = Boolean(out.isTTY) && !env.NO_COLOR;
  const wrap = (code: string) => (s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);
  return {
    dim: wrap('2'),
    bold: wrap('1'),
    red: wrap('31'),
    green: wrap('32'),
    yellow: wrap('33'),
    blue: wrap('34'),
    magenta: wrap('35'),
    cyan: wrap('36'),
  };
}

/** Strict flag parsing for a command: no positionals, an unknown or malformed flag is a usage error (exit 2). */
export function parseFlags<T extends Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>>(
  command: string,
  args: string[],
  options: T,
) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message, command);
  }
}

/** parseFlags for a command that also takes operands (`svc relay events import FILE`). */
export function parseFlagsAndPositionals<T extends Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>>(
  command: string,
  args: string[],
  options: T,
) {
  try {
    const r = parseArgs({ args, options, strict: true, allowPositionals: true });
    return { values: r.values, positionals: r.positionals };
  } catch (err) {
    throw new UsageError((err as Error).message, command);
  }
}
