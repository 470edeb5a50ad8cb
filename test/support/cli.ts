import { main } from '../../apps/relay/src/cli/main';

export type Run = { code: number; stdout: string; stderr: string };

/**
 * `svc <args>` in this process, as a user runs it (the CLI's own entry, its output captured): the
 * environment is only PATH and `env`, so nothing of the test runner's leaks in.
 */
export async function svc(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  opts: { signal?: AbortSignal; tty?: boolean; errTty?: boolean; onStderr?: (all: string) => void; stdin?: NodeJS.ReadableStream } = {},
): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (s: string) => (stdout += s), isTTY: opts.tty ?? false },
    stderr: {
      write: (s: string) => {
        stderr += s;
        opts.onStderr?.(stderr);
        return true;
      },
      isTTY: opts.errTty ?? false,
    },
    env: { PATH: process.env.PATH, ...env },
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.stdin ? { stdin: opts.stdin } : {}),
  });
  return { code, stdout, stderr };
}
