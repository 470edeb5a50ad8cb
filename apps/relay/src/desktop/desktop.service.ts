import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import {
  controlSessionFor,
  desktopTimeoutMs,
  DESKTOP_TOOL_RE,
  expireControlSessions,
  DomainError,
  parseDesktopStatus,
  pickDesktopTarget,
  reportDesktopClient,
  reportDesktopContext,
  canonicalToolList,
  type DesktopClient,
} from '@svc/domain';
import type { DesktopOutcome, DesktopRequester } from '@svc/events';
import type { Subscription } from 'rxjs';
import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { readFrame } from '../common/sockets/parse-frame';
import { ReportWindow } from '../common/loop/report-window';
import { Scheduler } from '../common/loop/scheduler';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { ChannelRouter } from '../phone-socket/channel-router';
import type { Envelope } from '../phone-socket/envelope';
import type { PhoneConnection } from '../phone-socket/phone-connection';
import { ActiveEditorFrame, WorkspaceFrame } from './desktop-frames.dto';

export type DesktopReply = { status: number; body: Record<string, unknown> };

type Pending = {
  requestId: string;
  tool: string;
  conn: PhoneConnection;
  target: DesktopClient;
  started: number;
  timer: NodeJS.Timeout;
  resolve: (r: DesktopReply) => void;
  reject: (e: Error) => void;
};

/** What the client is told when a control session ends (the reference relay's words). */
const CONTROL_END_REASON: Readonly<Record<'run_changed' | 'idle' | 'capacity', string>> = {
  run_changed: 'requester run changed',
  idle: 'control session idle timeout',
  capacity: 'control session capacity eviction',
};

/** `control_session` of a computer-use `desktop.command`, as the desktop CLI checks it (router.ts parseControlAuthority). */
function controlPayload(controlId: string, requestId: string, targetDeviceId: string, r: DesktopRequester): Record<string, unknown> {
  return {
    version: 1,
    id: controlId,
    request_id: requestId,
    requester_device_id: r.requesterDeviceId,
    target_device_id: targetDeviceId,
    run_id: r.runId,
    ...(r.chatSessionId ? { chat_session_id: r.chatSessionId } : {}),
    ...(r.profile ? { profile: r.profile } : {}),
  };
}

/** A client's restated reports (status, workspace, active editor) are written at most once a second each. */
export const DESKTOP_REPORT_WINDOW_MS = 1000;

/**
 * Desktop tools (spec 4.6): desktop clients report themselves on the `desktop` channel (`desktop.status`
 * with their tools, `workspace`, `active_editor`); the agent host's tools call `/desktop/{tool}`, and the
 * call goes out as `desktop.command` to the one client that serves it and comes back as its
 * `desktop.response`, within the tool's timeout. Any number of calls may be in flight; only the socket
 * a call went to may answer it. `last_seen_at` (the 30 s heartbeat) is liveness, kept here, not logged.
 *
 * A status, workspace or active-editor report restates state: each is written only when what the log
 * records of it changed, and at most once per `DESKTOP_REPORT_WINDOW_MS` per connection (the latest at
 * the window's end). The advertised tool list is not in the log (only its digest and length): the list
 * the connection last sent is kept here, in memory, for routing and `/desktop/health`, and goes with
 * the socket (every client sends its status again when it reconnects, and every 30 s).
 */
@Injectable()
export class DesktopService implements OnApplicationShutdown {
  private readonly pending = new Map<string, Pending>();
  private readonly conns = new Map<string, PhoneConnection>();
  private readonly lastSeen = new Map<string, number>();
  /** The tool list each connection last advertised (routing and health read it; the log holds its digest). */
  private readonly tools = new Map<string, string[]>();
  private readonly reports: ReportWindow;
  private readonly ends: Subscription;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    router: ChannelRouter,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    router.register('desktop', { onFrame: (c, e) => this.onFrame(c, e), onClose: (c) => this.onClose(c) });
    scheduler.register('desktop.control_idle', (m, now) => expireControlSessions(m, now));
    // The client drops the authority of an ended control session (desktop/src/tools/router.ts).
    this.ends = this.loop.bus.ofType('desktop.control_session_ended').subscribe((e) => {
      this.conns.get(e.data.connId)?.send('desktop', 'desktop.control_session_end', {
        version: 1,
        id: e.data.controlId,
        target_device_id: e.data.targetDeviceId,
        reason: CONTROL_END_REASON[e.data.reason],
      });
    });
    this.reports = new ReportWindow(DESKTOP_REPORT_WINDOW_MS, (err, connId, kind) =>
      this.logger[err instanceof DomainError ? 'debug' : 'warn']({ err: err.message, conn: connId, kind }, 'desktop report not recorded'),
    );
  }

  onApplicationShutdown(): void {
    this.ends.unsubscribe();
    this.reports.dropAll();
    for (const p of [...this.pending.values()])
      this.finish(p, 'client_gone', null, new DomainError('desktop.relay_stopping', 'unavailable', 'the relay is stopping'));
  }

  get inFlight(): number {
    return this.pending.size;
  }

  lastSeenAt(connId: string): number | null {
    return this.lastSeen.get(connId) ?? null;
  }

  /** The tools a connection advertised last (null: it sent no status, or it is gone). */
  toolsOf(connId: string): readonly string[] | null {
    return this.tools.get(connId) ?? null;
  }

  // ---- client side -----------------------------------------------------------------------------

  private async onFrame(conn: PhoneConnection, env: Envelope): Promise<void> {
    // The CLI sends `desktop.status` and `desktop.response` prefixed, `workspace` and `active_editor` bare.
    const type = env.type.startsWith('desktop.') ? env.type.slice('desktop.'.length) : env.type;
    const p = conn.principal!;
    const who = { connId: conn.id, tokenPrefix: p.tokenPrefix };
    switch (type) {
      case 'status': {
        // By hand (parseDesktopStatus), not a DTO: with 256 tool names parseFrame adds 90-175 µs a frame (desktop-flood's 2,000 took twice as long).
        const st = parseDesktopStatus(env.payload);
        if (!st.ok) return conn.error(st.message, 'bad_frame', { channel: 'desktop' }, env.id);
        this.conns.set(conn.id, conn);
        this.lastSeen.set(conn.id, this.clock.now().getTime());
        const { tools, ...rest } = st.value;
        this.tools.set(conn.id, tools);
        const report = { ...rest, toolsDigest: createHash('sha256').update(canonicalToolList(tools)).digest('hex'), toolCount: tools.length };
        return this.reports.submit(conn.id, 'status', () =>
          this.loop.run(`device:${p.tokenPrefix}`, (m) => reportDesktopClient(m, { ...who, deviceId: p.deviceId, deviceName: p.deviceName }, report)),
        );
      }
      case 'response':
        return this.onResponse(conn, env);
      case 'workspace': {
        this.conns.set(conn.id, conn);
        const workspace = readFrame(WorkspaceFrame, env.payload).workspace();
        return this.reports.submit(conn.id, 'workspace', () =>
          this.loop.run(`device:${p.tokenPrefix}`, (m) => reportDesktopContext(m, who, { kind: 'workspace', workspace })),
        );
      }
      case 'active_editor': {
        this.conns.set(conn.id, conn);
        const activeEditor = readFrame(ActiveEditorFrame, env.payload).activeEditor();
        return this.reports.submit(conn.id, 'active_editor', () =>
          this.loop.run(`device:${p.tokenPrefix}`, (m) => reportDesktopContext(m, who, { kind: 'active_editor', activeEditor })),
        );
      }
      default:
        conn.error(`unknown desktop message "${env.type.slice(0, 64)}"`, 'unknown_type', { channel: 'desktop' }, env.id);
    }
  }

  private onResponse(conn: PhoneConnection, env: Envelope): void {
    // By hand, not through parseFrame: measured 7-29 µs for a small result and 5-17 ms for a 2,000-entry listing (~140 KB); this, 0.5-3 µs.
    const id = typeof env.payload.request_id === 'string' ? env.payload.request_id : null;
    const p = id ? this.pending.get(id) : undefined;
    // Only the socket a call went to may answer it; the call stays open for that socket.
    if (!p || p.conn !== conn) {
      conn.error(
        id
          ? `no desktop call ${id.slice(0, 64)} is waiting for this client (answered already, timed out, or sent to another)`
          : 'desktop.response needs its request_id',
        'unknown_request',
        { channel: 'desktop', request_id: id },
        env.id,
      );
      return;
    }
    const failed = env.payload.ok === false || (typeof env.payload.status === 'number' && env.payload.status >= 400);
    // The client's answer goes back as it is (the host's tools read `ok`, `result`, `error`), with the target named.
    const body = { ...env.payload, target: { device_id: p.target.deviceId, device_name: p.target.deviceName } };
    this.finish(p, failed ? 'tool_error' : 'ok', { status: 200, body });
  }

  private onClose(conn: PhoneConnection): void {
    this.conns.delete(conn.id);
    this.lastSeen.delete(conn.id);
    this.tools.delete(conn.id);
    this.reports.drop(conn.id);
    for (const p of [...this.pending.values()])
      if (p.conn === conn)
        this.finish(
          p,
          'client_gone',
          null,
          new DomainError('desktop.client_gone', 'upstream', `${p.target.deviceName} disconnected before answering ${p.tool}`, {
            request_id: p.requestId,
          }),
        );
  }

  // ---- host side -------------------------------------------------------------------------------

  /**
   * One tool call: the target picked (refusals are not logged: nothing was sent), `desktop.command_sent`
   * made durable, the command sent, then the answer, the timeout or the client's departure, each ending
   * the call with `desktop.command_completed`.
   */
  async dispatch(
    tool: string,
    args: Record<string, unknown>,
    selector: string | null,
    actor: string,
    requester: DesktopRequester | null = null,
  ): Promise<DesktopReply> {
    if (!DESKTOP_TOOL_RE.test(tool))
      throw new DomainError(
        'validation_failed',
        'invalid',
        `"${tool.slice(0, 64)}" is not a tool name (a-z, 0-9 and _, starting with a letter, at most 64)`,
      );
    const target = pickDesktopTarget(this.loop.models, tool, selector, (id) => this.toolsOf(id));
    const conn = this.conns.get(target.connId);
    if (!conn || conn.closed) throw new DomainError('desktop.no_client', 'unavailable', `${target.deviceName} is not connected any more`);
    const requestId = randomUUID();
    const timeoutMs = desktopTimeoutMs(tool, this.config.desktop);
    // Computer use runs under a relay-owned control session binding the requester's run to this target.
    let controlId: string | null = null;
    await this.loop.run(actor, (m) => {
      const control = tool.startsWith('desktop_computer_') ? controlSessionFor(m, requester, target, `control-${randomUUID()}`) : null;
      controlId = control?.controlId ?? null;
      return [
        ...(control?.events ?? []),
        {
          type: 'desktop.command_sent',
          data: {
            requestId,
            tool,
            connId: conn.id,
            tokenPrefix: target.tokenPrefix,
            deviceId: target.deviceId,
            timeoutMs,
            ...(controlId !== null ? { controlId } : {}),
          },
        },
      ];
    });
    const control = controlId === null || requester === null ? null : controlPayload(controlId, requestId, target.deviceId, requester);
    return new Promise<DesktopReply>((resolve, reject) => {
      const p: Pending = {
        requestId,
        tool,
        conn,
        target,
        started: Date.now(),
        resolve,
        reject,
        timer: setTimeout(
          () =>
            this.finish(
              p,
              'timeout',
              null,
              new DomainError('desktop.timeout', 'timeout', `${target.deviceName} did not answer ${tool} within ${Math.round(timeoutMs / 1000)} s`, {
                request_id: requestId,
                timeout_seconds: timeoutMs / 1000,
              }),
            ),
          timeoutMs,
        ),
      };
      this.pending.set(requestId, p);
      const sent = conn.send(
        'desktop',
        'desktop.command',
        { request_id: requestId, tool, args, target_device_id: target.deviceId, ...(control ? { control_session: control } : {}) },
        requestId,
      );
      if (!sent)
        this.finish(
          p,
          'send_failed',
          null,
          new DomainError('desktop.client_gone', 'upstream', `${target.deviceName} disconnected before the call was sent`, { request_id: requestId }),
        );
    });
  }

  /** Ends a call once: its timer cleared, the outcome logged, then the caller answered. */
  private finish(p: Pending, outcome: DesktopOutcome, reply: DesktopReply | null, error?: DomainError): void {
    if (this.pending.get(p.requestId) !== p) return;
    this.pending.delete(p.requestId);
    clearTimeout(p.timer);
    const durationMs = Date.now() - p.started;
    this.loop
      .run(`device:${p.target.tokenPrefix}`, () => [
        { type: 'desktop.command_completed', data: { requestId: p.requestId, tool: p.tool, tokenPrefix: p.target.tokenPrefix, outcome, durationMs } },
      ])
      .then(
        () => (reply ? p.resolve(reply) : p.reject(error!)),
        (err: Error) => {
          this.logger.error({ err: err.message, requestId: p.requestId }, 'desktop call end could not be recorded');
          p.reject(err);
        },
      );
  }
}
