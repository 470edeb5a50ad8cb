import { isoMs } from '../epoch';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import type { Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

type MutableOpenShell = {
  shellId: string;
  sessionName: string;
  tokenPrefix: string;
  deviceId: string;
  pid: number;
  shell: string;
  /** Size at open; resizes are not events. */
  cols: number;
  rows: number;
  openedAt: number;
  /** The phone socket it streams to; null while detached. */
  connId: string | null;
  detachedAt: number | null;
  /** Epoch ms after which a detached shell is ended; null while attached. */
  graceUntil: number | null;
};

type MutableRunningTui = { tuiId: string; tokenPrefix: string; connId: string; pid: number; program: string; startedAt: number };

/** An open shell and a running TUI gateway, read-only outside this projection. */
export type OpenShell = DeepReadonly<MutableOpenShell>;
export type RunningTui = DeepReadonly<MutableRunningTui>;

type State = { shells: MutableOpenShell[]; tuis: MutableRunningTui[] };

/**
 * Open shells and running TUI gateways, for the channel rules (4 shells per device, grace expiry) and
 * the console. Ephemeral: `relay.started` empties it, since no child process outlives the relay.
 */
export class TerminalProjection implements Projection<State> {
  private readonly shells = new Map<string, MutableOpenShell>();
  private readonly tuis = new Map<string, MutableRunningTui>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'relay.started':
        this.shells.clear();
        this.tuis.clear();
        break;
      case 'terminal.opened': {
        const d = e.data;
        this.shells.set(d.shellId, {
          shellId: d.shellId,
          sessionName: d.sessionName,
          tokenPrefix: d.tokenPrefix,
          deviceId: d.deviceId,
          pid: d.pid,
          shell: d.shell,
          cols: d.cols,
          rows: d.rows,
          openedAt: eventAtMs(e),
          connId: d.connId,
          detachedAt: null,
          graceUntil: null,
        });
        break;
      }
      case 'terminal.detached': {
        const s = this.shells.get(e.data.shellId);
        if (s) {
          s.connId = null;
          s.detachedAt = eventAtMs(e);
          s.graceUntil = isoMs(e.data.graceUntil);
        }
        break;
      }
      case 'terminal.reattached': {
        const s = this.shells.get(e.data.shellId);
        if (s) {
          s.connId = e.data.connId;
          s.detachedAt = null;
          s.graceUntil = null;
        }
        break;
      }
      case 'terminal.closed':
        this.shells.delete(e.data.shellId);
        break;
      case 'tui.started':
        this.tuis.set(e.data.tuiId, { ...e.data, startedAt: eventAtMs(e) });
        break;
      case 'tui.stopped':
        this.tuis.delete(e.data.tuiId);
        break;
      default:
        break;
    }
  }

  shell(shellId: string): OpenShell | undefined {
    return this.shells.get(shellId);
  }

  allShells(): readonly OpenShell[] {
    return [...this.shells.values()].sort((a, b) => a.openedAt - b.openedAt || a.shellId.localeCompare(b.shellId));
  }

  shellsOf(tokenPrefix: string): readonly OpenShell[] {
    return this.allShells().filter((s) => s.tokenPrefix === tokenPrefix);
  }

  shellByName(tokenPrefix: string, sessionName: string): OpenShell | undefined {
    for (const s of this.shells.values()) if (s.tokenPrefix === tokenPrefix && s.sessionName === sessionName) return s;
    return undefined;
  }

  /** Detached shells whose grace period is over at `now`. */
  graceExpired(now: Date): readonly OpenShell[] {
    return this.allShells().filter((s) => s.graceUntil !== null && s.graceUntil <= now.getTime());
  }

  tui(tuiId: string): RunningTui | undefined {
    return this.tuis.get(tuiId);
  }

  allTuis(): readonly RunningTui[] {
    return [...this.tuis.values()].sort((a, b) => a.startedAt - b.startedAt || a.tuiId.localeCompare(b.tuiId));
  }

  snapshot(): State {
    return { shells: this.allShells().map((s) => ({ ...s })), tuis: this.allTuis().map((t) => ({ ...t })) };
  }

  restore(state: State): void {
    this.shells.clear();
    this.tuis.clear();
    for (const s of state.shells ?? []) this.shells.set(s.shellId, { ...s });
    for (const t of state.tuis ?? []) this.tuis.set(t.tuiId, { ...t });
  }
}
