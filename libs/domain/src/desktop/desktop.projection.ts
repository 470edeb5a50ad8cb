import type { DesktopActiveEditor, DesktopOutcome, DesktopRequester, DesktopWorkspace, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';

type MutableDesktopClient = {
  connId: string;
  tokenPrefix: string;
  deviceId: string;
  deviceName: string;
  /**
   * SHA-256 of the tool list its `desktop.status` advertised (the list itself lives with the connection,
   * in the relay's memory, not in the log). Null until the client sent one: such a socket serves no tool
   * and is never a target.
   */
  toolsDigest: string | null;
  toolCount: number;
  host: string | null;
  platform: string | null;
  version: string | null;
  computerUse: boolean;
  workspace: DesktopWorkspace | null;
  activeEditor: DesktopActiveEditor | null;
  reportedAt: number;
};

type MutableControlSession = DesktopRequester & { controlId: string; connId: string; targetDeviceId: string; startedAt: number; usedAt: number };

type MutableDesktopDispatch = {
  requestId: string;
  tool: string;
  deviceId: string;
  tokenPrefix: string;
  actor: string;
  sentAt: number;
  outcome: DesktopOutcome | 'pending';
  durationMs: number | null;
};

/** A desktop socket that reported on the channel; read-only outside this projection, like the two below. */
export type DesktopClient = DeepReadonly<MutableDesktopClient>;
/** A live computer-use control session (ephemeral: gone with its target's socket and at a restart). */
export type ControlSession = DeepReadonly<MutableControlSession>;
export type DesktopDispatch = DeepReadonly<MutableDesktopDispatch>;

const RECENT_MAX = 100;

type State = {
  clients: MutableDesktopClient[];
  recent: MutableDesktopDispatch[];
  outcomes: Record<string, number>;
  controls?: MutableControlSession[];
};

/**
 * Desktop clients and their dispatches. Clients (tools, identity, workspace, active editor) are live
 * state of a socket: dropped when it closes, all reset at `relay.started`. The last 100 dispatches and
 * the count of each outcome outlive a restart (a dispatch in flight at a crash stays `pending`, and is
 * shown as such).
 */
export class DesktopProjection implements Projection<State> {
  private readonly clients = new Map<string, MutableDesktopClient>();
  /** Live control sessions by id, oldest first. */
  private readonly controls = new Map<string, MutableControlSession>();
  private recent: MutableDesktopDispatch[] = [];
  private outcomes: Record<string, number> = {};

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'relay.started':
        this.clients.clear();
        this.controls.clear();
        break;
      case 'phone.disconnected':
        this.clients.delete(e.data.connId);
        // A control session is bound to its target's socket: it ends with it.
        for (const [id, c] of this.controls) if (c.connId === e.data.connId) this.controls.delete(id);
        break;
      case 'desktop.control_session_started': {
        const { controlId, connId, targetDeviceId, requesterDeviceId, chatSessionId, runId, profile } = e.data;
        const at = eventAtMs(e);
        this.controls.set(controlId, {
          controlId,
          connId,
          targetDeviceId,
          requesterDeviceId,
          chatSessionId,
          runId,
          profile,
          startedAt: at,
          usedAt: at,
        });
        break;
      }
      case 'desktop.control_session_ended':
        this.controls.delete(e.data.controlId);
        break;
      case 'desktop.client_reported': {
        const was = this.clients.get(e.data.connId);
        this.clients.set(e.data.connId, {
          connId: e.data.connId,
          tokenPrefix: e.data.tokenPrefix,
          deviceId: e.data.deviceId,
          deviceName: e.data.deviceName,
          toolsDigest: e.data.toolsDigest ?? null,
          toolCount: e.data.toolCount ?? e.data.tools?.length ?? 0,
          host: e.data.host,
          platform: e.data.platform,
          version: e.data.version,
          computerUse: e.data.computerUse,
          workspace: was?.workspace ?? null,
          activeEditor: was?.activeEditor ?? null,
          reportedAt: eventAtMs(e),
        });
        break;
      }
      case 'desktop.context_reported': {
        const c = this.clients.get(e.data.connId) ?? this.blank(e.data.connId, e.data.tokenPrefix, eventAtMs(e));
        if (e.data.kind === 'workspace') c.workspace = e.data.workspace;
        else c.activeEditor = e.data.activeEditor;
        this.clients.set(c.connId, c);
        break;
      }
      case 'desktop.command_sent': {
        const control = e.data.controlId === undefined ? undefined : this.controls.get(e.data.controlId);
        if (control) control.usedAt = eventAtMs(e);
        this.recent.push({
          requestId: e.data.requestId,
          tool: e.data.tool,
          deviceId: e.data.deviceId,
          tokenPrefix: e.data.tokenPrefix,
          actor: e.actor,
          sentAt: eventAtMs(e),
          outcome: 'pending',
          durationMs: null,
        });
        if (this.recent.length > RECENT_MAX) this.recent.splice(0, this.recent.length - RECENT_MAX);
        break;
      }
      case 'desktop.command_completed': {
        const d = this.recent.find((x) => x.requestId === e.data.requestId);
        if (d) {
          d.outcome = e.data.outcome;
          d.durationMs = e.data.durationMs;
        }
        this.outcomes[e.data.outcome] = (this.outcomes[e.data.outcome] ?? 0) + 1;
        break;
      }
      default:
        break;
    }
  }

  private blank(connId: string, tokenPrefix: string, at: number): MutableDesktopClient {
    return {
      connId,
      tokenPrefix,
      deviceId: '',
      deviceName: '',
      toolsDigest: null,
      toolCount: 0,
      host: null,
      platform: null,
      version: null,
      computerUse: false,
      workspace: null,
      activeEditor: null,
      reportedAt: at,
    };
  }

  client(connId: string): DesktopClient | undefined {
    return this.clients.get(connId);
  }

  /** Every desktop socket that said something on the channel, oldest report first. */
  all(): readonly DesktopClient[] {
    return [...this.clients.values()];
  }

  /** Sockets that advertised their tools: the only ones a call may go to. */
  targets(): readonly DesktopClient[] {
    return this.all().filter((c) => c.toolsDigest !== null);
  }

  /** Newest first. */
  recentDispatches(limit = RECENT_MAX): readonly DesktopDispatch[] {
    return this.recent.slice(-limit).reverse();
  }

  outcomeCounts(): Readonly<Record<string, number>> {
    return this.outcomes;
  }

  /** Live control sessions, oldest first. */
  controlSessions(): readonly ControlSession[] {
    return [...this.controls.values()];
  }

  controlSession(controlId: string): ControlSession | undefined {
    return this.controls.get(controlId);
  }

  snapshot(): State {
    return {
      clients: [...this.clients.values()],
      recent: this.recent,
      outcomes: this.outcomes,
      controls: [...this.controls.values()].map((c) => ({ ...c })),
    };
  }

  restore(s: State): void {
    this.clients.clear();
    // A snapshot of an older relay held tool lists; clients never outlive the `relay.started` that follows.
    for (const c of s.clients ?? []) this.clients.set(c.connId, { ...c, toolsDigest: c.toolsDigest ?? null, toolCount: c.toolCount ?? 0 });
    this.controls.clear();
    for (const c of s.controls ?? []) this.controls.set(c.controlId, { ...c });
    this.recent = s.recent ?? [];
    this.outcomes = s.outcomes ?? {};
  }
}
