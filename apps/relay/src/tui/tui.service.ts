import { BeforeApplicationShutdown, Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { DomainError, startTui, stopTui, type TermSize } from '@svc/domain';
import type { TerminalCloseReason } from '@svc/events';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/loop/clock';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import { ChannelRouter } from '../phone-socket/channel-router';
import type { Envelope } from '../phone-socket/envelope';
import type { PhoneConnection } from '../phone-socket/phone-connection';
import { channelLost } from '../terminal/channel-lost';
import { reapSession } from '../terminal/process-reaper';
import { HIGH_WATER, LOW_WATER } from '../terminal/shell-process';
import type { ChannelError } from '../phone-socket/channel-router';
import { locateGateway, NOT_CONFIGURED_MESSAGE } from './gateway-locator';
import { logStderr, readLines, spawnGateway, type GatewayExit } from './gateway-process';
import { MAX_LINE_BYTES, readGatewayLine, rpcLine, RPC_INVALID, RPC_UNAVAILABLE, type RpcId } from './tui-rpc';
import { readFrame } from '../common/sockets/parse-frame';
import { TermSizeFrame } from '../terminal/terminal-frames.dto';
import { TuiAttachFrame } from './tui-frames.dto';

/** WIRE.md/issue 3: SIGTERM, then SIGKILL 2 s later. */
export const TUI_KILL_GRACE_MS = 2000;
/** Request ids awaiting the gateway's answer, per gateway (answered with an error if it exits first). */
const MAX_IN_FLIGHT = 4096;
/** An attach that cannot have a gateway still leaves the socket usable: these are answered softly. */
const SOFT_ATTACH_CODES = new Set(['grant_required', 'channel_unavailable', 'tui.not_configured', 'tui.spawn_failed']);

type Tui = {
  tuiId: string;
  conn: PhoneConnection;
  child: ChildProcessWithoutNullStreams;
  pid: number;
  reason: TerminalCloseReason | null;
  exited: Promise<GatewayExit>;
  recorded: Promise<void>;
  paused: boolean;
  dropped: number;
  inFlight: Set<RpcId>;
  /** The phone was already told `tui.detached` (its session ended before the gateway did). */
  told: boolean;
};

/** The `tui` channel (WIRE.md): the agent's TUI gateway process, JSON-RPC lines in and out. */
@Injectable()
export class TuiService implements OnModuleDestroy, BeforeApplicationShutdown {
  private readonly byConn = new Map<string, Tui>();
  /** Sockets whose `tui.attach` got no gateway, with why: their requests are answered with it. */
  private readonly unavailable = new Map<string, ChannelError>();
  private readonly subs: Subscription[] = [];
  private stopping = false;
  private noGatewayLogged = false;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    router: ChannelRouter,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    router.register('tui', {
      onFrame: (conn, env) => this.handle(conn, env),
      onClose: (conn) => this.onClose(conn),
      onError: (conn, env, err) => this.sendError(conn, env, err),
    });
    this.subs.push(
      channelLost(loop, clock, 'tui').subscribe(({ tokenPrefix, reason }) => {
        for (const t of this.byConn.values()) {
          if (t.conn.tokenPrefix !== tokenPrefix) continue;
          // A revoked or expired session's socket closes (4403) before its gateway has exited: the phone is told
          // now, as the terminal's is. This runs before that close: the phone hub subscribes at module init.
          if ((reason === 'revoked' || reason === 'session_expired') && !t.conn.closed) {
            t.told = true;
            t.conn.send('tui', 'tui.detached', { reason, exit_code: null, signal: null });
          }
          void this.stop(t, reason);
        }
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

  /**
   * Errors in the shape the desktop CLI can live with: it treats `tui.error` as the end of the socket
   * (transport/RelayTransport.ts:833), so a `tui.error` would kill `shell` and `sessions` too. So:
   * - an attach that cannot get a gateway (none found, grant missing, spawn failed) is answered
   *   `tui.attached {available: false, pid: null, code, message}` plus a `gateway.ready` event, so the
   *   CLI's commands go on to their first request instead of waiting 60 s for a gateway that never comes;
   * - a request with an `id` is answered `tui.rpc.response {id, error: {code, message, data: {code}}}`,
   *   which rejects just that request with the message;
   * - a resize or detach without a gateway has nothing to do (a detach is answered `tui.detached`);
   * - only what is none of these (a malformed attach, an id-less notification) gets `tui.error {message, code}`.
   */
  private sendError(conn: PhoneConnection, env: Envelope, err: ChannelError): void {
    const type = env.type.startsWith('tui.') ? env.type : `tui.${env.type}`;
    const id = env.payload.id;
    if (type === 'tui.attach' && SOFT_ATTACH_CODES.has(err.code)) {
      this.unavailable.set(conn.id, err);
      conn.send(
        'tui',
        'tui.attached',
        { pid: null, server_version: this.runtime.version, available: false, code: err.code, message: err.message, ...err.extra },
        env.id,
      );
      conn.send('tui', 'tui.rpc.event', {
        jsonrpc: '2.0',
        method: 'event',
        params: { type: 'gateway.ready', payload: { available: false, code: err.code, message: err.message } },
      });
      return;
    }
    if (SOFT_ATTACH_CODES.has(err.code) && type === 'tui.resize') return; // no gateway: nothing to resize
    if (SOFT_ATTACH_CODES.has(err.code) && type === 'tui.detach') {
      conn.send('tui', 'tui.detached', { reason: 'detached', exit_code: null, signal: null }, env.id);
      return;
    }
    if (type === 'tui.rpc.request' && (typeof id === 'string' || typeof id === 'number') && String(id).length <= 256) {
      const rpcCode = err.code === 'tui.bad_request' || err.code === 'tui.too_large' ? RPC_INVALID : RPC_UNAVAILABLE;
      conn.send(
        'tui',
        'tui.rpc.response',
        { jsonrpc: '2.0', id, error: { code: rpcCode, message: err.message, data: { code: err.code, ...err.extra } } },
        env.id,
      );
      return;
    }
    conn.send('tui', 'tui.error', { message: err.message, code: err.code, ...err.extra }, env.id);
  }

  private async handle(conn: PhoneConnection, env: Envelope): Promise<void> {
    const type = env.type.startsWith('tui.') ? env.type : `tui.${env.type}`;
    switch (type) {
      case 'tui.attach':
        return this.attach(conn, env);
      case 'tui.rpc.request': {
        const t = this.mine(conn);
        // By hand (rpcLine), not through parseFrame: that adds 9-18 µs to a small request and 0.4-1.1 ms to a 15 KB reply.
        const line = rpcLine(env.payload);
        if (t.child.stdin.writableLength > 4 * MAX_LINE_BYTES) {
          throw new DomainError('tui.busy', 'rate_limited', 'the TUI gateway is not reading its input; try again');
        }
        const id = env.payload.id;
        if (typeof env.payload.method === 'string' && (typeof id === 'string' || typeof id === 'number') && t.inFlight.size < MAX_IN_FLIGHT) {
          t.inFlight.add(id);
        }
        t.child.stdin.write(line);
        return;
      }
      case 'tui.resize': {
        const { cols, rows } = readFrame(TermSizeFrame, env.payload);
        const size: TermSize = { cols, rows };
        // Nothing to resize on a socket whose attach got no gateway.
        if (this.unavailable.has(conn.id) && !this.byConn.get(conn.id)) return;
        const t = this.mine(conn);
        // The agent's gateway handles `terminal.resize` (a request: its answer comes back as a response).
        const rpc = { jsonrpc: '2.0', id: `resize-${randomUUID()}`, method: 'terminal.resize', params: size };
        t.child.stdin.write(JSON.stringify(rpc) + '\n');
        return;
      }
      case 'tui.detach': {
        const running = this.byConn.get(conn.id);
        if (!running || running.reason) {
          // Nothing runs: detaching is already done.
          this.unavailable.delete(conn.id);
          conn.send('tui', 'tui.detached', { reason: 'detached', exit_code: null, signal: null }, env.id);
          return;
        }
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
    if (t && !t.reason) return t;
    const why = this.unavailable.get(conn.id);
    if (why) throw new DomainError(why.code, 'unavailable', why.message, why.extra);
    throw new DomainError('tui.not_attached', 'conflict', 'no TUI is attached on this connection; send tui.attach first');
  }

  private async attach(conn: PhoneConnection, env: Envelope): Promise<void> {
    const launch = locateGateway(this.config);
    if (!launch) {
      // Said once at info (the operator's cue); every desktop CLI login attaches, so later ones at debug.
      const level = this.noGatewayLogged ? 'debug' : 'info';
      this.noGatewayLogged = true;
      this.logger[level](
        { looked_in: this.config.tuiAgent.roots },
        'tui.attach: no TUI gateway (RELAY_TUI_COMMAND unset, no agent checkout with tui_gateway); answered as unavailable',
      );
      throw new DomainError('tui.not_configured', 'unavailable', NOT_CONFIGURED_MESSAGE);
    }
    const existing = this.byConn.get(conn.id);
    if (existing && !existing.reason) {
      conn.send('tui', 'tui.attached', { pid: existing.pid, server_version: this.runtime.version, reattach: true }, env.id);
      return;
    }
    const asked = readFrame(TuiAttachFrame, env.payload);
    const size: TermSize = { cols: asked.cols ?? 80, rows: asked.rows ?? 24 };
    const { profile, resume_session_id: resume } = asked;
    const prefix = conn.tokenPrefix!;
    const tuiId = randomUUID();
    const { child, pid, exited } = await spawnGateway(launch, size, { profile, resume }, this.logger);
    const program = path.basename(launch.file);
    child.on('error', (err) => this.logger.warn({ tuiId, err: err.message }, 'TUI gateway process error'));
    child.stdin.on('error', () => undefined); // EPIPE once it exits; the exit is handled below
    const t: Tui = {
      tuiId,
      conn,
      child,
      pid,
      reason: null,
      exited,
      recorded: Promise.resolve(),
      paused: false,
      dropped: 0,
      inFlight: new Set(),
      told: false,
    };
    try {
      await this.loop.run(`device:${prefix}`, (m) => startTui(m, { tuiId, tokenPrefix: prefix, connId: conn.id, pid, program, ...size }));
    } catch (err) {
      t.reason = 'revoked';
      void reapSession(pid, { signal: 'SIGTERM', graceMs: TUI_KILL_GRACE_MS });
      throw err;
    }
    this.byConn.set(conn.id, t);
    this.unavailable.delete(conn.id);
    t.recorded = exited.then((exit) => this.onExit(t, exit));
    this.logger.info({ tuiId, pid, tokenPrefix: prefix, program, source: launch.source }, 'TUI gateway started');
    conn.send('tui', 'tui.attached', { pid, server_version: this.runtime.version, available: true }, env.id);
    readLines(child.stdout, MAX_LINE_BYTES, {
      line: (line) => this.forward(t, line),
      overflow: () => t.dropped++,
      afterChunk: () => {
        if (!t.paused && t.conn.ws.bufferedAmount > HIGH_WATER) this.pauseStdout(t);
      },
    });
    logStderr(child, this.logger, { tuiId, pid });
    if (conn.closed) void this.stop(t, 'disconnected');
  }

  /** A stdout line: responses (id + result/error) and events (method) go to the phone; anything else is dropped. */
  private forward(t: Tui, line: string): void {
    const r = readGatewayLine(line);
    switch (r.kind) {
      case 'blank':
        return;
      case 'event':
        return void t.conn.send('tui', 'tui.rpc.event', r.msg);
      case 'response':
        if (r.id !== null) t.inFlight.delete(r.id);
        return void t.conn.send('tui', 'tui.rpc.response', r.msg);
      case 'not_an_object':
        t.dropped++;
        return this.logger.debug({ tuiId: t.tuiId, bytes: r.bytes }, 'TUI gateway wrote a line that is not a JSON-RPC object; dropped');
      case 'unknown':
        t.dropped++;
        return this.logger.debug({ tuiId: t.tuiId }, 'TUI gateway object is neither a response nor an event; dropped');
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

  private async stop(t: Tui, reason: TerminalCloseReason): Promise<GatewayExit> {
    t.reason ??= reason;
    void reapSession(t.pid, { signal: 'SIGTERM', graceMs: TUI_KILL_GRACE_MS });
    const exit = await t.exited;
    await t.recorded;
    return exit;
  }

  private onClose(conn: PhoneConnection): void {
    this.unavailable.delete(conn.id);
    const t = this.byConn.get(conn.id);
    if (t && !this.stopping) void this.stop(t, 'disconnected');
  }

  private async onExit(t: Tui, exit: GatewayExit): Promise<void> {
    const reason = t.reason ?? 'exited';
    t.reason = reason;
    // Whatever else is left in its session (children it forgot) goes too.
    await reapSession(t.pid, { signal: 'SIGTERM', graceMs: 200 }).catch(() => undefined);
    try {
      await this.loop.run('system', (m) => stopTui(m, t.tuiId, reason, exit));
    } catch (err) {
      this.logger.error({ tuiId: t.tuiId, err: (err as Error).message }, 'TUI stop not recorded');
    }
    if (this.byConn.get(t.conn.id) === t) this.byConn.delete(t.conn.id);
    this.logger.info(
      { tuiId: t.tuiId, pid: t.pid, reason, exitCode: exit.exitCode, signal: exit.signal, droppedLines: t.dropped },
      'TUI gateway stopped',
    );
    if (!t.conn.closed) {
      // Requests it never answered would otherwise wait for the client's own timeout (120 s in the CLI).
      const why = `the TUI gateway stopped (${reason}, exit code ${exit.exitCode ?? 'none'}) before answering; send tui.attach to start it again`;
      for (const id of t.inFlight) {
        t.conn.send('tui', 'tui.rpc.response', {
          jsonrpc: '2.0',
          id,
          error: { code: RPC_UNAVAILABLE, message: why, data: { code: 'tui.gateway_stopped' } },
        });
      }
      if (reason !== 'detached' && !t.told) t.conn.send('tui', 'tui.detached', { reason, exit_code: exit.exitCode, signal: exit.signal });
    }
    t.inFlight.clear();
  }
}
