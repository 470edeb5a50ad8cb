import { BeforeApplicationShutdown, Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { DomainError, startTui, stopTui, termSize, type TermSize } from '@svc/domain';
import type { TerminalCloseReason } from '@svc/events';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/clock';
import type { RelayConfig } from '../common/config';
import { EventLog } from '../common/event-log';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/tokens';
import { ChannelRouter } from '../phone-socket/channel-router';
import type { Envelope } from '../phone-socket/envelope';
import type { PhoneConnection } from '../phone-socket/phone-connection';
import { channelLost } from '../terminal/channel-lost';
import { reapSession } from '../terminal/process-reaper';
import { HIGH_WATER, LOW_WATER } from '../terminal/shell-process';
import { splitCommandLine } from '../common/command-line';

/** WIRE.md/issue 3: SIGTERM, then SIGKILL 2 s later. */
export const TUI_KILL_GRACE_MS = 2000;
/** One JSON-RPC line either way is at most this long; longer stdout lines are dropped (and counted). */
export const MAX_LINE_BYTES = 1024 * 1024;
const TAG_RE = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

type Tui = {
  tuiId: string;
  conn: PhoneConnection;
  child: ChildProcessWithoutNullStreams;
  pid: number;
  reason: TerminalCloseReason | null;
  exited: Promise<{ exitCode: number | null; signal: number | null }>;
  recorded: Promise<void>;
  paused: boolean;
  dropped: number;
};

/** The `tui` channel (WIRE.md): the agent's TUI gateway process, JSON-RPC lines in and out. */
@Injectable()
export class TuiService implements OnModuleDestroy, BeforeApplicationShutdown {
  private readonly argv: string[] | null;
  private readonly byConn = new Map<string, Tui>();
  private readonly subs: Subscription[] = [];
  private stopping = false;

  constructor(
    private readonly log: EventLog,
    private readonly clock: Clock,
    router: ChannelRouter,
    @Inject(RELAY_CONFIG) config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    // Already checked at start (checkTerminalConfig), so this cannot throw here.
    this.argv = config.tuiCommand ? splitCommandLine(config.tuiCommand) : null;
    router.register('tui', { onFrame: (conn, env) => this.onFrame(conn, env), onClose: (conn) => this.onClose(conn) });
    this.subs.push(
      channelLost(log, clock, 'tui').subscribe(({ tokenPrefix, reason }) => {
        for (const t of this.byConn.values()) if (t.conn.tokenPrefix === tokenPrefix) void this.stop(t, reason);
      }),
    );
  }

  /** TUI gateways running now (tests). */
  running(): Array<{ tuiId: string; pid: number; connId: string; paused: boolean; buffered: number }> {
    return [...this.byConn.values()].map((t) => ({
      tuiId: t.tuiId,
      pid: t.pid,
      connId: t.conn.id,
      paused: t.paused,
      buffered: t.conn.ws.bufferedAmount,
    }));
  }

  onModuleDestroy(): void {
    for (const s of this.subs) s.unsubscribe();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.byConn.values()].map((t) => this.stop(t, 'shutdown')));
  }

  private async onFrame(conn: PhoneConnection, env: Envelope): Promise<void> {
    try {
      await this.handle(conn, env);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      conn.send('tui', 'tui.error', { message: err.message, code: err.code, ...err.extra }, env.id);
    }
  }

  private async handle(conn: PhoneConnection, env: Envelope): Promise<void> {
    const type = env.type.startsWith('tui.') ? env.type : `tui.${env.type}`;
    switch (type) {
      case 'tui.attach':
        return this.attach(conn, env);
      case 'tui.rpc.request': {
        const t = this.mine(conn);
        const line = rpcLine(env.payload);
        if (t.child.stdin.writableLength > 4 * MAX_LINE_BYTES) {
          throw new DomainError('tui.busy', 'rate_limited', 'the TUI gateway is not reading its input; try again');
        }
        t.child.stdin.write(line);
        return;
      }
      case 'tui.resize': {
        const t = this.mine(conn);
        const size = termSize(env.payload, null);
        t.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'resize', params: size }) + '\n');
        return;
      }
      case 'tui.detach': {
        const t = this.mine(conn);
        // Up to 2 s for a gateway that ignores SIGTERM: answered when it is gone, other frames go on.
        void this.stop(t, 'detached').then((exit) =>
          conn.send('tui', 'tui.detached', { reason: 'detached', exit_code: exit.exitCode, signal: exit.signal }, env.id),
        );
        return;
      }
      default:
        throw new DomainError('tui.unknown_type', 'invalid', `unknown tui message "${env.type}"`);
    }
  }

  private mine(conn: PhoneConnection): Tui {
    const t = this.byConn.get(conn.id);
    if (!t || t.reason) throw new DomainError('tui.not_attached', 'conflict', 'no TUI is attached on this connection; send tui.attach first');
    return t;
  }

  private async attach(conn: PhoneConnection, env: Envelope): Promise<void> {
    if (!this.argv) throw new DomainError('tui.not_configured', 'unavailable', 'no TUI gateway is configured on this relay (set RELAY_TUI_COMMAND)');
    const existing = this.byConn.get(conn.id);
    if (existing && !existing.reason) {
      conn.send('tui', 'tui.attached', { pid: existing.pid, server_version: this.runtime.version, reattach: true }, env.id);
      return;
    }
    const size: TermSize = termSize(env.payload, { cols: 80, rows: 24 });
    const profile = tag(env.payload.profile, 'profile');
    const resume = tag(env.payload.resume_session_id, 'resume_session_id');
    const prefix = conn.tokenPrefix!;
    const tuiId = randomUUID();
    const home = os.homedir();
    const childEnv: NodeJS.ProcessEnv = { ...process.env, SVC_TUI_COLS: String(size.cols), SVC_TUI_ROWS: String(size.rows) };
    for (const k of ['RELAY_PAIRING_CODE', 'RELAY_SECURE_LINK_BROKER_HOST_TOKEN']) delete childEnv[k];
    if (profile) childEnv.SVC_TUI_PROFILE = profile;
    if (resume) childEnv.SVC_TUI_RESUME_SESSION_ID = resume;
    const [file, ...args] = this.argv;
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, cwd: fs.existsSync(home) ? home : '/', env: childEnv });
    const spawned = await new Promise<Error | null>((resolve) => {
      child.once('spawn', () => resolve(null));
      child.once('error', (err) => resolve(err));
    });
    if (spawned || child.pid === undefined) {
      this.logger.error({ program: path.basename(file), err: spawned?.message }, 'TUI gateway did not start');
      throw new DomainError('tui.spawn_failed', 'unavailable', `the TUI gateway could not be started (${path.basename(file)})`);
    }
    const pid = child.pid;
    child.on('error', (err) => this.logger.warn({ tuiId, err: err.message }, 'TUI gateway process error'));
    child.stdin.on('error', () => undefined); // EPIPE once it exits; the exit is handled below
    const exited = new Promise<{ exitCode: number | null; signal: number | null }>((resolve) =>
      child.once('exit', (code, sig) => resolve({ exitCode: code, signal: sig ? (os.constants.signals[sig] ?? null) : null })),
    );
    const t: Tui = { tuiId, conn, child, pid, reason: null, exited, recorded: Promise.resolve(), paused: false, dropped: 0 };
    try {
      await this.log.run(`device:${prefix}`, (m) =>
        startTui(m, { tuiId, tokenPrefix: prefix, connId: conn.id, pid, program: path.basename(file), ...size }),
      );
    } catch (err) {
      t.reason = 'revoked';
      void reapSession(pid, { signal: 'SIGTERM', graceMs: TUI_KILL_GRACE_MS });
      throw err;
    }
    this.byConn.set(conn.id, t);
    t.recorded = exited.then((exit) => this.onExit(t, exit));
    this.logger.info({ tuiId, pid, tokenPrefix: prefix, program: path.basename(file) }, 'TUI gateway started');
    conn.send('tui', 'tui.attached', { pid, server_version: this.runtime.version }, env.id);
    this.pipeStdout(t);
    this.pipeStderr(t);
    if (conn.closed) void this.stop(t, 'disconnected');
  }

  /** stdout lines: responses (id + result/error) and events (method); anything else is dropped. */
  private pipeStdout(t: Tui): void {
    let carry = '';
    let skipping = false;
    t.child.stdout.setEncoding('utf8');
    t.child.stdout.on('data', (chunk: string) => {
      let start = 0;
      for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
        const line = carry + chunk.slice(start, nl);
        carry = '';
        start = nl + 1;
        if (skipping) {
          skipping = false;
          continue;
        }
        this.forward(t, line);
      }
      if (!skipping) carry += chunk.slice(start);
      if (carry.length > MAX_LINE_BYTES) {
        carry = '';
        skipping = true;
        t.dropped++;
      }
      if (!t.paused && t.conn.ws.bufferedAmount > HIGH_WATER) this.pauseStdout(t);
    });
  }

  private forward(t: Tui, line: string): void {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text.trim() === '') return;
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      msg = null;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      t.dropped++;
      this.logger.debug({ tuiId: t.tuiId, bytes: text.length }, 'TUI gateway wrote a line that is not a JSON-RPC object; dropped');
      return;
    }
    const o = msg as Record<string, unknown>;
    if (typeof o.method === 'string') t.conn.send('tui', 'tui.rpc.event', o);
    else if ('id' in o && ('result' in o || 'error' in o)) t.conn.send('tui', 'tui.rpc.response', o);
    else {
      t.dropped++;
      this.logger.debug({ tuiId: t.tuiId }, 'TUI gateway object is neither a response nor an event; dropped');
    }
  }

  private pauseStdout(t: Tui): void {
    t.paused = true;
    t.child.stdout.pause();
    const check = (): void => {
      if (t.reason || t.conn.closed || t.conn.ws.bufferedAmount < LOW_WATER) {
        t.paused = false;
        t.child.stdout.resume();
        return;
      }
      setTimeout(check, 10).unref();
    };
    setTimeout(check, 10).unref();
  }

  /** Issue 3: the gateway's stderr goes to the relay log (line by line, truncated), never to the phone. */
  private pipeStderr(t: Tui): void {
    let carry = '';
    t.child.stderr.setEncoding('utf8');
    t.child.stderr.on('data', (chunk: string) => {
      const lines = (carry + chunk).split('\n');
      carry = lines.pop()!.slice(0, 4096);
      for (const l of lines) if (l.trim()) this.logger.info({ tuiId: t.tuiId, pid: t.pid, stream: 'stderr' }, l.slice(0, 2000));
    });
  }

  private async stop(t: Tui, reason: TerminalCloseReason): Promise<{ exitCode: number | null; signal: number | null }> {
    t.reason ??= reason;
    void reapSession(t.pid, { signal: 'SIGTERM', graceMs: TUI_KILL_GRACE_MS });
    const exit = await t.exited;
    await t.recorded;
    return exit;
  }

  private onClose(conn: PhoneConnection): void {
    const t = this.byConn.get(conn.id);
    if (t && !this.stopping) void this.stop(t, 'disconnected');
  }

  private async onExit(t: Tui, exit: { exitCode: number | null; signal: number | null }): Promise<void> {
    const reason = t.reason ?? 'exited';
    t.reason = reason;
    // Whatever else is left in its session (children it forgot) goes too.
    await reapSession(t.pid, { signal: 'SIGTERM', graceMs: 200 }).catch(() => undefined);
    try {
      await this.log.run('system', (m) => stopTui(m, t.tuiId, reason, exit));
    } catch (err) {
      this.logger.error({ tuiId: t.tuiId, err: (err as Error).message }, 'TUI stop not recorded');
    }
    if (this.byConn.get(t.conn.id) === t) this.byConn.delete(t.conn.id);
    this.logger.info(
      { tuiId: t.tuiId, pid: t.pid, reason, exitCode: exit.exitCode, signal: exit.signal, droppedLines: t.dropped },
      'TUI gateway stopped',
    );
    if (reason !== 'detached' && !t.conn.closed) {
      t.conn.send('tui', 'tui.detached', { reason, exit_code: exit.exitCode, signal: exit.signal });
    }
  }
}

/** A `tui.rpc.request` payload: one JSON-RPC 2.0 object (request, notification or a reply to the gateway). */
function rpcLine(p: Record<string, unknown>): string {
  const isCall = typeof p.method === 'string' && p.method.length > 0 && p.method.length <= 256;
  const isReply = 'id' in p && ('result' in p || 'error' in p);
  if (!isCall && !isReply) {
    throw new DomainError('tui.bad_request', 'invalid', 'payload: a JSON-RPC 2.0 object with "method" (or a reply with "id" and "result"/"error")');
  }
  if (p.id !== undefined && p.id !== null && typeof p.id !== 'string' && typeof p.id !== 'number') {
    throw new DomainError('tui.bad_request', 'invalid', 'id: a string or a number');
  }
  const line = JSON.stringify({ jsonrpc: '2.0', ...p }) + '\n';
  if (Buffer.byteLength(line) > MAX_LINE_BYTES)
    throw new DomainError('tui.too_large', 'too_large', `a JSON-RPC line is at most ${MAX_LINE_BYTES} bytes`);
  return line;
}

function tag(v: unknown, name: string): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || !TAG_RE.test(v)) throw new DomainError('tui.bad_attach', 'invalid', `${name}: up to 128 of A-Z a-z 0-9 . _ : @ -`);
  return v;
}
