import { BeforeApplicationShutdown, Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import {
  epoch,
  assertCanOpenShell,
  closeShell,
  detachShell,
  DomainError,
  openShell,
  reattachShell,
  sessionNameOf,
  type OpenShell,
} from '@svc/domain';
import type { TerminalCloseReason } from '@svc/events';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/loop/clock';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { Scheduler } from '../common/loop/scheduler';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { ChannelRouter, type ChannelError } from '../phone-socket/channel-router';
import type { Envelope } from '../phone-socket/envelope';
import type { PhoneConnection } from '../phone-socket/phone-connection';
import { readFrame } from '../common/sockets/parse-frame';
import { channelLost } from './channel-lost';
import { TerminalAttachFrame, TerminalResizeFrame, TerminalSessionFrame } from './terminal-frames.dto';
import { RecordingsService } from './recordings.service';
import { ShellProcess } from './shell-process';

/** A single `terminal.input` frame carries at most this much (a paste, not a file transfer). */
export const MAX_INPUT_CHARS = 64 * 1024;

/**
 * `terminal.detached` reasons the clients know (issue 11): the user's own detach and kill, and a shell that
 * ended by itself, are `client detach`, `client kill` and `eof`; the app shows any other reason as an
 * error on the tab (TerminalViewModel.kt:681) and the CLI exits 1 on it (commands/shell.ts:519).
 */
export const DETACH_REASON = 'client detach';
/** A new shell's first output is waited for (at most this long, until this quiet) before the ack. */
export const SETTLE_MAX_MS = 1500;
export const SETTLE_QUIET_MS = 100;
export function wireReason(reason: TerminalCloseReason, killedByClient: boolean): string {
  if (reason === 'exited') return 'eof';
  if (reason === 'killed' && killedByClient) return 'client kill';
  return reason;
}

/** The `terminal` channel (WIRE.md): real shells on node-pty for phones holding the `terminal` grant. */
@Injectable()
export class TerminalService implements OnModuleDestroy, BeforeApplicationShutdown {
  private readonly live = new Map<string, ShellProcess>();
  private readonly subs: Subscription[] = [];
  private stopping = false;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    router: ChannelRouter,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly recordings: RecordingsService,
  ) {
    router.register('terminal', {
      onFrame: (conn, env) => this.handle(conn, env),
      onClose: (conn) => this.onClose(conn),
      onError: (conn, env, err) => this.sendError(conn, env, err),
    });
    scheduler.onTick(() => this.endExpiredGrace());
    this.subs.push(
      channelLost(loop, clock, 'terminal').subscribe(({ tokenPrefix, reason }) => {
        if (reason === 'revoked' || reason === 'session_expired') this.tellEnded(tokenPrefix, reason);
        void this.killAll((s) => s.spec.tokenPrefix === tokenPrefix, reason);
      }),
    );
  }

  /** Shells this relay runs right now (tests and the operator view). */
  shells(): ShellProcess[] {
    return [...this.live.values()];
  }

  onModuleDestroy(): void {
    for (const s of this.subs) s.unsubscribe();
  }

  /** Every shell ends, and its end is recorded, before the log closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.killAll(() => true, 'shutdown');
  }

  /**
   * The operator ends a shell (the console's End shell, `DELETE /terminal/shells/:id`): its process group is
   * hung up, its `terminal.closed` (reason `killed`) is written by the operator, and an attached phone is
   * told (`terminal.detached`, reason `killed`) as when the relay ends it.
   */
  async killByOperator(shellId: string): Promise<{ exitCode: number | null; signal: number | null }> {
    const shell = this.live.get(shellId);
    if (!shell || shell.closeReason) throw new DomainError('terminal.not_found', 'not_found', 'no open shell has that id');
    shell.endedBy = 'operator';
    const exit = await shell.kill('killed');
    await this.recorded(shellId);
    return { exitCode: exit.exitCode, signal: exit.signal };
  }

  private readonly closing = new Map<string, Promise<void>>();

  private recorded(shellId: string): Promise<void> {
    return this.closing.get(shellId) ?? Promise.resolve();
  }

  private async killAll(match: (s: ShellProcess) => boolean, reason: TerminalCloseReason): Promise<void> {
    const targets = this.shells().filter(match);
    await Promise.all(
      targets.map(async (s) => {
        await s.kill(reason);
        await this.recorded(s.spec.shellId);
      }),
    );
  }

  /**
   * A revoked or expired session's phone socket closes (4403) before its shells have exited, so the attached
   * phone is told now, not on the exit: without `terminal.detached` the desktop CLI's `shell --raw` waited on
   * a dead socket. This runs before that close: the phone hub subscribes at module init, after every constructor.
   */
  private tellEnded(tokenPrefix: string, reason: 'revoked' | 'session_expired'): void {
    for (const shell of this.live.values()) {
      const conn = shell.conn;
      if (shell.spec.tokenPrefix !== tokenPrefix || !conn || conn.closed) continue;
      shell.detach();
      conn.send('terminal', 'terminal.detached', { session_name: shell.spec.sessionName, reason, exit_code: null, signal: null });
    }
  }

  private async endExpiredGrace(): Promise<void> {
    const expired = this.loop.models.terminal.graceExpired(this.clock.now());
    for (const s of expired) {
      const shell = this.live.get(s.shellId);
      if (shell) void shell.kill('grace_expired');
      else await this.loop.run('system', (m) => closeShell(m, s.shellId, 'grace_expired', { exitCode: null, signal: null }));
    }
  }

  /**
   * `terminal.error {message, code, session_name?}`. The app binds an error to a tab only when it names the
   * tab's `session_name` (TerminalViewModel.kt:692), so the name of the frame that failed is echoed.
   */
  private sendError(conn: PhoneConnection, env: Envelope, err: ChannelError): void {
    const payload: Record<string, unknown> = { message: err.message, code: err.code, ...err.extra };
    if (typeof env.payload.session_name === 'string') payload.session_name = env.payload.session_name.slice(0, 128);
    conn.send('terminal', 'terminal.error', payload, env.id);
  }

  private handle(conn: PhoneConnection, env: Envelope): Promise<void> | void {
    const prefix = conn.tokenPrefix!;
    const p = env.payload;
    const type = env.type.startsWith('terminal.') ? env.type : `terminal.${env.type}`;
    switch (type) {
      case 'terminal.attach':
        return this.attach(conn, env);
      case 'terminal.input': {
        const shell = this.attachedHere(conn, sessionNameOf(p.session_name));
        if (typeof p.data !== 'string') throw new DomainError('terminal.bad_input', 'invalid', 'data: a string is required');
        if (p.data.length > MAX_INPUT_CHARS)
          throw new DomainError('terminal.input_too_large', 'too_large', `data: at most ${MAX_INPUT_CHARS} characters per frame`);
        shell.write(p.data);
        return;
      }
      case 'terminal.resize': {
        const frame = readFrame(TerminalResizeFrame, p);
        this.attachedHere(conn, frame.session_name).resize(frame.cols, frame.rows);
        return;
      }
      case 'terminal.detach':
        return this.detach(conn, env);
      case 'terminal.kill':
        return this.kill(conn, env);
      case 'terminal.list':
        conn.send('terminal', 'terminal.sessions', { sessions: this.list(conn, prefix), tmux_available: false }, env.id);
        return;
      default:
        throw new DomainError('terminal.unknown_type', 'invalid', `unknown terminal message "${env.type}"`);
    }
  }

  /**
   * The device's shells, in the item shape the desktop CLI reads (commands/sessions.ts: `name` required,
   * `attached` a number of attached clients, `live`, `owned_by_client`), with `session_name` kept as well.
   */
  private list(conn: PhoneConnection, prefix: string): Array<Record<string, unknown>> {
    return this.loop.models.terminal.shellsOf(prefix).map((s: OpenShell) => {
      const live = this.live.get(s.shellId);
      return {
        name: s.sessionName,
        session_name: s.sessionName,
        pid: s.pid,
        shell: s.shell,
        cols: live?.cols ?? s.cols,
        rows: live?.rows ?? s.rows,
        attached: s.connId !== null ? 1 : 0,
        live: live !== undefined && !live.closeReason,
        owned_by_client: s.connId === conn.id,
        windows: 1,
        created_at: epoch(s.openedAt),
        detached_at: epoch(s.detachedAt),
        grace_expires_at: epoch(s.graceUntil),
      };
    });
  }

  private shellOf(prefix: string, name: string): ShellProcess {
    const s = this.loop.models.terminal.shellByName(prefix, name);
    const shell = s && this.live.get(s.shellId);
    if (!shell || shell.closeReason)
      throw new DomainError('terminal.not_found', 'not_found', `no open shell named "${name}"; send terminal.attach first`);
    return shell;
  }

  private attachedHere(conn: PhoneConnection, name: string): ShellProcess {
    const shell = this.shellOf(conn.tokenPrefix!, name);
    if (shell.conn !== conn)
      throw new DomainError('terminal.not_attached', 'conflict', `shell "${name}" is not attached to this connection; send terminal.attach`);
    return shell;
  }

  private async attach(conn: PhoneConnection, env: Envelope): Promise<void> {
    const prefix = conn.tokenPrefix!;
    const actor = `device:${prefix}`;
    const frame = readFrame(TerminalAttachFrame, env.payload);
    const name = frame.session_name;
    const ending = this.loop.models.terminal.shellByName(prefix, name);
    // A shell of that name still being ended (the app reseeds a killed tab under the same name and may
    // attach at once, TerminalViewModel.kt:676-680): the attach opens a new one once the end is recorded.
    if (ending && this.live.get(ending.shellId)?.closeReason) await this.recorded(ending.shellId);
    const existing = this.loop.models.terminal.shellByName(prefix, name);
    const live = existing && this.live.get(existing.shellId);
    // A re-attach without a size keeps the shell's current one.
    const size = { cols: frame.cols ?? live?.cols ?? 80, rows: frame.rows ?? live?.rows ?? 24 };
    if (existing && live && !live.closeReason) {
      await this.loop.run(actor, (m) => reattachShell(m, existing.shellId, conn.id));
      const previous = live.conn;
      if (previous && previous !== conn) previous.send('terminal', 'terminal.detached', { session_name: name, reason: 'attached_elsewhere' });
      live.resize(size.cols, size.rows);
      conn.send('terminal', 'terminal.attached', this.attachedPayload(live, true), env.id);
      live.attach(conn, true);
      return;
    }
    assertCanOpenShell(this.loop.models, prefix, name);
    let shell: ShellProcess;
    const owner = { shellId: randomUUID(), sessionName: name, tokenPrefix: prefix, deviceId: conn.principal!.deviceId };
    // Recording (when on) begins before the pty spawns, so the shell's first output is in it.
    const recorder = this.recordings.begin(owner, { shell: this.config.terminalShell!, ...size });
    try {
      shell = new ShellProcess(
        { shellId: owner.shellId, sessionName: name, tokenPrefix: prefix, shell: this.config.terminalShell!, ...size },
        recorder,
      );
    } catch (err) {
      void this.recordings.abandon(owner.shellId);
      this.logger.error({ tokenPrefix: prefix, err: (err as Error).message }, 'shell did not start');
      throw new DomainError('terminal.spawn_failed', 'unavailable', 'the shell could not be started on the host');
    }
    try {
      await this.loop.run(actor, (m) =>
        openShell(m, {
          shellId: shell.spec.shellId,
          sessionName: name,
          tokenPrefix: prefix,
          deviceId: owner.deviceId,
          connId: conn.id,
          pid: shell.pid,
          shell: shell.spec.shell,
          ...size,
        }),
      );
    } catch (err) {
      void shell.kill('killed').then(() => this.recordings.abandon(owner.shellId));
      throw err;
    }
    this.live.set(shell.spec.shellId, shell);
    this.closing.set(
      shell.spec.shellId,
      shell.exited.then((exit) => this.onExit(shell, exit.reason, exit.exitCode, exit.signal)),
    );
    this.logger.info({ shellId: shell.spec.shellId, pid: shell.pid, tokenPrefix: prefix, sessionName: name }, 'shell opened');
    // The desktop CLI drops output that arrives between the ack and its output listener (commands/shell.ts
    // awaits a file write in between), so a new shell's prompt is waited for and sent in the ack's `replay`.
    await shell.settled(SETTLE_MAX_MS, SETTLE_QUIET_MS);
    if (conn.closed) {
      await this.loop.run('system', (m) => detachShell(m, shell.spec.shellId, 'disconnected', this.config.terminalGraceSeconds, this.clock.now()));
      return;
    }
    conn.send('terminal', 'terminal.attached', this.attachedPayload(shell, false), env.id);
    shell.attach(conn, false);
  }

  /**
   * `terminal.attached`. `tmux_available` is false: shells live in the relay (for the grace period), not
   * in tmux. `replay` carries the recent output (on a new shell: its prompt), which the desktop CLI paints
   * from the ack (commands/shell.ts:491); the app paints the `terminal.output` that follows instead.
   */
  private attachedPayload(shell: ShellProcess, reattach: boolean): Record<string, unknown> {
    const payload: Record<string, unknown> = {
      session_name: shell.spec.sessionName,
      pid: shell.pid,
      shell: shell.spec.shell,
      cols: shell.cols,
      rows: shell.rows,
      reattach,
      tmux_available: false,
      grace_seconds: this.config.terminalGraceSeconds,
    };
    const replay = shell.replayText();
    if (replay.length > 0) payload.replay = replay;
    return payload;
  }

  private async detach(conn: PhoneConnection, env: Envelope): Promise<void> {
    const name = readFrame(TerminalSessionFrame, env.payload).session_name;
    const shell = this.attachedHere(conn, name);
    const [e] = await this.loop.run(`device:${conn.tokenPrefix}`, (m, now) =>
      detachShell(m, shell.spec.shellId, 'detach', this.config.terminalGraceSeconds, now),
    );
    shell.detach();
    const graceUntil = e?.type === 'terminal.detached' ? epoch(Date.parse(e.data.graceUntil)) : null;
    conn.send(
      'terminal',
      'terminal.detached',
      { session_name: name, reason: DETACH_REASON, grace_seconds: this.config.terminalGraceSeconds, grace_expires_at: graceUntil },
      env.id,
    );
  }

  /** Answered once the shell is gone and recorded; the socket's other frames are not held up meanwhile. */
  private kill(conn: PhoneConnection, env: Envelope): void {
    const name = readFrame(TerminalSessionFrame, env.payload).session_name;
    const shell = this.shellOf(conn.tokenPrefix!, name);
    shell.killAskedBy ??= conn;
    void shell.kill('killed').then(async (exit) => {
      await this.recorded(shell.spec.shellId);
      // The attached socket (if another one) heard of it in onExit; the asker gets its answer here.
      conn.send(
        'terminal',
        'terminal.detached',
        { session_name: name, reason: wireReason(exit.reason, true), exit_code: exit.exitCode, signal: exit.signal },
        env.id,
      );
    });
  }

  private onClose(conn: PhoneConnection): void {
    if (this.stopping) return;
    for (const shell of this.live.values()) {
      if (shell.conn !== conn) continue;
      shell.detach();
      if (shell.closeReason) continue;
      this.loop
        .run('system', (m, now) => detachShell(m, shell.spec.shellId, 'disconnected', this.config.terminalGraceSeconds, now))
        .catch((err: Error) => this.logger.warn({ shellId: shell.spec.shellId, err: err.message }, 'detach not recorded'));
    }
  }

  private async onExit(shell: ShellProcess, reason: TerminalCloseReason, exitCode: number | null, signal: number | null): Promise<void> {
    const id = shell.spec.shellId;
    try {
      await this.loop.run(shell.endedBy ?? 'system', (m) => closeShell(m, id, reason, { exitCode, signal }));
    } catch (err) {
      this.logger.error({ shellId: id, err: (err as Error).message }, 'shell close not recorded');
    }
    await this.recordings.end(id);
    this.live.delete(id);
    this.closing.delete(id);
    this.logger.info({ shellId: id, pid: shell.pid, tokenPrefix: shell.spec.tokenPrefix, reason, exitCode, signal }, 'shell closed');
    const conn = shell.conn;
    shell.detach();
    if (conn && !conn.closed && conn !== shell.killAskedBy) {
      const reasonOnWire = wireReason(reason, shell.killAskedBy !== null);
      conn.send('terminal', 'terminal.detached', { session_name: shell.spec.sessionName, reason: reasonOnWire, exit_code: exitCode, signal });
    }
  }
}
