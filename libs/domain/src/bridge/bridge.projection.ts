import { isoMs } from '../epoch';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import { McpTrails, type StepState, type TrailsState } from './mcp-trails';
import type { BridgeStatus, CommandOrigin, ConfirmationAsker, Projection, SafetyDecisionKind, StoredEvent, StoredRelayEvent } from '@svc/events';

type MutableBridgeDevice = Omit<BridgeStatus, 'autoDisableAt' | 'autoDisableBy'> & {
  /** Epoch ms, or null. */
  autoDisableAt: number | null;
  autoDisableBy: NonNullable<BridgeStatus['autoDisableBy']>;
  reportedAt: number;
  lastCommandAt: number | null;
};

/** A command's activity entry: what an MCP step copies (`StepState`, whose `safety` is the decision that let it through or stopped it), and where it came from. */
type MutableBridgeActivity = StepState & Partial<CommandOrigin>;

type MutableSafetyRecord = {
  seq: number;
  at: number;
  decision: SafetyDecisionKind;
  tokenPrefix: string;
  requestId: string | null;
  path: string | null;
  reason: string;
  package?: string;
  verb?: string;
  idleMinutes?: number;
  /** Confirmation decisions: who asked the user (the app's own modal, the relay's bridge.confirm, or the MCP client). */
  by?: ConfirmationAsker;
} & Partial<CommandOrigin>;

type MutablePendingConfirmation = { requestId: string; tokenPrefix: string; path: string; verb: string; deadline: number };

/** A phone that reported itself on the bridge channel and is still connected. Like the rest here, read-only outside this projection. */
export type BridgeDevice = DeepReadonly<MutableBridgeDevice>;
export type BridgeActivity = DeepReadonly<MutableBridgeActivity>;
export type SafetyRecord = DeepReadonly<MutableSafetyRecord>;
export type PendingConfirmation = DeepReadonly<MutablePendingConfirmation>;

type State = {
  devices: MutableBridgeDevice[];
  active: string | null;
  activity: MutableBridgeActivity[];
  safety: MutableSafetyRecord[];
  pending: MutablePendingConfirmation[];
  counts: Record<string, number>;
  commandsTotal: number;
  /** Absent in snapshots written before issue 40 (no record before it named an MCP session). */
  trails?: TrailsState;
};

export const ACTIVITY_RING = 200;
export const SAFETY_RING = 200;

const ms = (iso: string | null | undefined): number | null => (iso ? isoMs(iso) : null);
/** How a command came (absent: HTTP), copied onto what the operator reads. */
const originOf = (d: Partial<CommandOrigin>): Partial<CommandOrigin> => (d.via ? { via: d.via, client: d.client } : {});
/** The step a trail keeps of an activity entry (its origin left out: the trail has it). */
const stepOf = (a: MutableBridgeActivity): StepState => ({
  requestId: a.requestId,
  tokenPrefix: a.tokenPrefix,
  method: a.method,
  path: a.path,
  shape: a.shape,
  at: a.at,
  outcome: a.outcome,
  status: a.status,
  latencyMs: a.latencyMs,
  safety: a.safety,
});

/**
 * Bridge devices (ephemeral: emptied at `relay.started` and when a socket closes), the active-device
 * choice, pending confirmations, and two rings an operator reads: recent commands and safety decisions
 * (every decision but the plain `allow`/`exempt`, which show on their command in the activity ring).
 */
export class BridgeProjection implements Projection<State> {
  private readonly devices = new Map<string, MutableBridgeDevice>();
  private activeDevice: string | null = null;
  private activityRing: MutableBridgeActivity[] = [];
  private readonly activityById = new Map<string, MutableBridgeActivity>();
  private safetyRing: MutableSafetyRecord[] = [];
  private readonly pendingById = new Map<string, MutablePendingConfirmation>();
  private counts: Record<string, number> = {};
  private commandsTotal = 0;
  /** The recent MCP sessions' steps (issue 40, item 6). */
  readonly trails = new McpTrails();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    const at = eventAtMs(e);
    switch (e.type) {
      case 'relay.started':
        this.devices.clear();
        this.pendingById.clear();
        for (const a of this.activityRing) if (a.outcome === 'pending' || a.outcome === 'awaiting_confirmation') a.outcome = 'interrupted';
        this.trails.interrupt();
        break;
      case 'phone.disconnected': {
        const d = this.devices.get(e.data.tokenPrefix);
        if (d && d.connId === e.data.connId) this.devices.delete(d.tokenPrefix);
        break;
      }
      case 'session.revoked':
      case 'session.expired':
        this.devices.delete(e.data.tokenPrefix);
        if (this.activeDevice === e.data.tokenPrefix) this.activeDevice = null;
        break;
      case 'session.grant_expired':
        if (e.data.channel === 'bridge') this.devices.delete(e.data.tokenPrefix);
        break;
      case 'bridge.status_reported': {
        const prev = this.devices.get(e.data.tokenPrefix);
        this.devices.set(e.data.tokenPrefix, {
          ...e.data,
          trustedVerbs: [...e.data.trustedVerbs],
          autoDisableAt: ms(e.data.autoDisableAt),
          // Before the negotiation (issue 35) the relay kept every phone's deadline.
          autoDisableBy: e.data.autoDisableBy ?? 'relay',
          reportedAt: at,
          lastCommandAt: prev?.lastCommandAt ?? null,
        });
        break;
      }
      case 'bridge.active_selected':
        this.activeDevice = e.data.tokenPrefix;
        break;
      case 'bridge.command_sent': {
        this.commandsTotal++;
        const d = this.devices.get(e.data.tokenPrefix);
        if (d) {
          d.lastCommandAt = at;
          if (e.data.autoDisableAt) d.autoDisableAt = ms(e.data.autoDisableAt);
        }
        const a = this.activityById.get(e.data.requestId);
        if (a) {
          a.outcome = 'pending';
        } else {
          this.pushActivity({
            requestId: e.data.requestId,
            tokenPrefix: e.data.tokenPrefix,
            method: e.data.method,
            path: e.data.path,
            shape: e.data.shape,
            at,
            outcome: 'pending',
            status: null,
            latencyMs: null,
            safety: null,
            ...originOf(e.data),
          });
        }
        const entry = this.activityById.get(e.data.requestId);
        if (entry) {
          entry.shape = e.data.shape;
          this.trails.step(e.data, stepOf(entry));
        }
        break;
      }
      case 'bridge.command_answered': {
        const a = this.activityById.get(e.data.requestId);
        if (a) {
          Object.assign(a, { outcome: 'answered', status: e.data.status, latencyMs: e.data.latencyMs });
          this.trails.sync(stepOf(a), e.data.evidence);
        }
        const d = e.data.currentApp === undefined ? undefined : this.devices.get(e.data.tokenPrefix);
        if (d) d.currentApp = e.data.currentApp!;
        break;
      }
      case 'bridge.command_failed': {
        const a = this.activityById.get(e.data.requestId);
        if (a) {
          Object.assign(a, { outcome: e.data.reason, latencyMs: e.data.latencyMs });
          this.trails.sync(stepOf(a), e.data.evidence);
        }
        break;
      }
      case 'bridge.safety_decided':
        this.applySafety(e.data, e.seq, at);
        break;
      default:
        break;
    }
  }

  private applySafety(d: Extract<StoredRelayEvent, { type: 'bridge.safety_decided' }>['data'], seq: number, at: number): void {
    this.counts[d.decision] = (this.counts[d.decision] ?? 0) + 1;
    if (d.decision !== 'allow' && d.decision !== 'exempt') {
      this.safetyRing.push({
        seq,
        at,
        decision: d.decision,
        tokenPrefix: d.tokenPrefix,
        requestId: d.requestId,
        path: d.path,
        reason: d.reason,
        ...(d.package ? { package: d.package } : {}),
        ...(d.verb ? { verb: d.verb } : {}),
        ...(d.idleMinutes !== undefined ? { idleMinutes: d.idleMinutes } : {}),
        ...(d.by ? { by: d.by } : {}),
        ...originOf(d),
      });
      if (this.safetyRing.length > SAFETY_RING) this.safetyRing.splice(0, this.safetyRing.length - SAFETY_RING);
    }
    let a = d.requestId ? this.activityById.get(d.requestId) : undefined;
    if (!a && d.requestId && d.path && d.method) {
      a = {
        requestId: d.requestId,
        tokenPrefix: d.tokenPrefix,
        method: d.method,
        path: d.path,
        shape: {},
        at,
        outcome: 'pending',
        status: null,
        latencyMs: null,
        safety: d.decision,
        ...originOf(d),
      };
      this.pushActivity(a);
    }
    if (a) {
      a.safety = d.decision;
      switch (d.decision) {
        case 'sideload_only':
        case 'master_off':
        case 'blocked_package':
        case 'implicit_intent':
        case 'unconfirmable':
        case 'confirmation_denied':
        case 'confirmation_timed_out':
          a.outcome = 'refused';
          a.status = 403;
          break;
        case 'confirmation_cancelled':
          a.outcome = 'phone_gone';
          break;
        case 'confirmation_requested':
          a.outcome = 'awaiting_confirmation';
          break;
        default:
          break;
      }
      this.trails.step(d, stepOf(a));
    }
    switch (d.decision) {
      case 'confirmation_requested':
        if (d.requestId && d.path)
          this.pendingById.set(d.requestId, {
            requestId: d.requestId,
            tokenPrefix: d.tokenPrefix,
            path: d.path,
            verb: d.verb ?? '',
            deadline: ms(d.deadline) ?? at,
          });
        break;
      case 'confirmation_allowed':
      case 'confirmation_denied':
      case 'confirmation_timed_out':
      case 'confirmation_cancelled':
        if (d.requestId) this.pendingById.delete(d.requestId);
        break;
      case 'auto_disabled': {
        const dev = this.devices.get(d.tokenPrefix);
        if (dev) {
          dev.masterEnabled = false;
          dev.autoDisableAt = null;
        }
        break;
      }
      default:
        break;
    }
  }

  private pushActivity(a: MutableBridgeActivity): void {
    this.activityRing.push(a);
    this.activityById.set(a.requestId, a);
    while (this.activityRing.length > ACTIVITY_RING) {
      const old = this.activityRing.shift()!;
      this.activityById.delete(old.requestId);
    }
  }

  device(tokenPrefix: string): BridgeDevice | undefined {
    return this.devices.get(tokenPrefix);
  }

  allDevices(): readonly BridgeDevice[] {
    return [...this.devices.values()].sort((a, b) => b.reportedAt - a.reportedAt);
  }

  get active(): string | null {
    return this.activeDevice;
  }

  /** Newest first. */
  activity(limit = ACTIVITY_RING): readonly BridgeActivity[] {
    return this.activityRing.slice(-limit).reverse();
  }

  /** Newest first. */
  safety(limit = SAFETY_RING): readonly SafetyRecord[] {
    return this.safetyRing.slice(-limit).reverse();
  }

  pendingConfirmation(requestId: string): PendingConfirmation | undefined {
    return this.pendingById.get(requestId);
  }

  pendingConfirmations(): readonly PendingConfirmation[] {
    return [...this.pendingById.values()];
  }

  decisionCounts(): Readonly<Record<string, number>> {
    return { ...this.counts };
  }

  get totalCommands(): number {
    return this.commandsTotal;
  }

  inFlight(): number {
    let n = 0;
    for (const a of this.activityRing) if (a.outcome === 'pending' || a.outcome === 'awaiting_confirmation') n++;
    return n;
  }

  snapshot(): State {
    return structuredClone({
      devices: [...this.devices.values()],
      active: this.activeDevice,
      activity: this.activityRing,
      safety: this.safetyRing,
      pending: [...this.pendingById.values()],
      counts: this.counts,
      commandsTotal: this.commandsTotal,
      trails: this.trails.snapshot(),
    });
  }

  restore(state: State): void {
    const s = structuredClone(state);
    this.devices.clear();
    for (const d of s.devices ?? []) this.devices.set(d.tokenPrefix, d);
    this.activeDevice = s.active ?? null;
    this.activityRing = s.activity ?? [];
    this.activityById.clear();
    for (const a of this.activityRing) this.activityById.set(a.requestId, a);
    this.safetyRing = s.safety ?? [];
    this.pendingById.clear();
    for (const p of s.pending ?? []) this.pendingById.set(p.requestId, p);
    this.counts = s.counts ?? {};
    this.commandsTotal = s.commandsTotal ?? 0;
    this.trails.restore(s.trails);
  }
}
