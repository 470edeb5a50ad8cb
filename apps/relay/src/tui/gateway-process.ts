import { DomainError, type TermSize } from '@svc/domain';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { GatewayLaunch } from './gateway-locator';

export type GatewayExit = { exitCode: number | null; signal: number | null };

/** What a started gateway is: its process, pid, and the promise of its exit. */
export type GatewayProcess = { child: ChildProcessWithoutNullStreams; pid: number; exited: Promise<GatewayExit> };

/**
 * Starts one TUI gateway in its own process group (so its whole session can be reaped), with the
 * terminal size and the attach options under our names and the ones the agent's gateway reads. The
 * relay's own secrets are not passed on. A gateway that does not start is `tui.spawn_failed`.
 */
export async function spawnGateway(
  launch: GatewayLaunch,
  size: TermSize,
  opts: { profile: string | null; resume: string | null },
  logger: Logger,
): Promise<GatewayProcess> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...launch.env, SVC_TUI_COLS: String(size.cols), SVC_TUI_ROWS: String(size.rows) };
  for (const k of ['RELAY_PAIRING_CODE', 'RELAY_SECURE_LINK_BROKER_HOST_TOKEN']) delete childEnv[k];
  if (opts.profile) childEnv.SVC_TUI_PROFILE = childEnv.HERMES_PROFILE = opts.profile;
  if (opts.resume) childEnv.SVC_TUI_RESUME_SESSION_ID = childEnv.HERMES_TUI_RESUME = opts.resume;
  const { file, args } = launch;
  const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, cwd: launch.cwd, env: childEnv });
  const spawned = await new Promise<Error | null>((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', (err) => resolve(err));
  });
  if (spawned || child.pid === undefined) {
    logger.error({ program: path.basename(file), err: spawned?.message }, 'TUI gateway did not start');
    throw new DomainError('tui.spawn_failed', 'unavailable', `the TUI gateway could not be started (${path.basename(file)})`);
  }
  const exited = new Promise<GatewayExit>((resolve) =>
    child.once('exit', (code, sig) => resolve({ exitCode: code, signal: sig ? (os.constants.signals[sig] ?? null) : null })),
  );
  return { child, pid: child.pid, exited };
}

/**
 * A stream's lines, each at most `maxBytes`: a longer one is skipped whole (`onOverflow`), never cut.
 * `afterChunk` runs after each chunk's lines (backpressure checks).
 */
export function readLines(
  stream: Readable,
  maxBytes: number,
  on: { line: (line: string) => void; overflow: () => void; afterChunk: () => void },
): void {
  let carry = '';
  let skipping = false;
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
      const line = carry + chunk.slice(start, nl);
      carry = '';
      start = nl + 1;
      if (skipping) {
        skipping = false;
        continue;
      }
      on.line(line);
    }
    if (!skipping) carry += chunk.slice(start);
    if (carry.length > maxBytes) {
      carry = '';
      skipping = true;
      on.overflow();
    }
    on.afterChunk();
  });
}

/** Issue 3: the gateway's stderr goes to the relay log (line by line, truncated), never to the phone. */
export function logStderr(child: ChildProcessWithoutNullStreams, logger: Logger, ctx: { tuiId: string; pid: number }): void {
  let carry = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    const lines = (carry + chunk).split('\n');
    carry = lines.pop()!.slice(0, 4096);
    for (const l of lines) if (l.trim()) logger.info({ ...ctx, stream: 'stderr' }, l.slice(0, 2000));
  });
}
