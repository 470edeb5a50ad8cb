import type { CommandEvidence, CommandOrigin, CommandShape, SafetyDecisionKind } from '@svc/events';
import type { DeepReadonly } from '../deep-readonly';

/** The outcome of a command as the Bridge page shows it (bridge.projection.ts decides it). */
export type ActivityOutcome =
  'pending' | 'answered' | 'timeout' | 'phone_gone' | 'session_revoked' | 'bad_response' | 'refused' | 'awaiting_confirmation' | 'interrupted';

/** What a step copies from its command's activity entry (one rule: the activity's). */
export type StepState = {
  requestId: string;
  tokenPrefix: string;
  method: string;
  path: string;
  shape: CommandShape;
  at: number;
  outcome: ActivityOutcome;
  status: number | null;
  latencyMs: number | null;
  safety: SafetyDecisionKind | null;
};

type MutableStep = StepState & { evidence: CommandEvidence | null };
type MutableTrail = {
  session: string;
  client: string;
  tokenPrefix: string;
  startedAt: number;
  lastAt: number;
  steps: MutableStep[];
  dropped: number;
};

export type TrailStep = DeepReadonly<MutableStep>;
/** One MCP session's commands in order: what the console plays back (issue 40, item 6). */
export type McpTrail = DeepReadonly<MutableTrail>;
export type TrailsState = { trails: MutableTrail[] };

/** The most sessions kept while the log replays (RELAY_MCP_TRAILS may keep fewer, never more). */
export const MAX_TRAILS = 200;
export const DEFAULT_TRAILS = 20;
/** A session's newest steps kept; older ones are counted in `dropped`. */
export const TRAIL_STEPS = 200;

/**
 * The recent MCP sessions' steps, bounded in sessions (`keep`, the newest by first command) and in steps
 * per session. Fed by BridgeProjection, which decides each command's outcome; a command belongs to a trail
 * when its origin names an MCP session (events from v2 on).
 */
export class McpTrails {
  private bySession = new Map<string, MutableTrail>();
  private readonly byRequest = new Map<string, MutableStep>();
  private keep = MAX_TRAILS;

  /** Keeps at most `n` sessions from now on (the relay's setting), dropping the oldest at once. */
  keepAtMost(n: number): void {
    this.keep = Math.max(1, Math.min(MAX_TRAILS, Math.floor(n)));
    this.trim();
  }

  /** A command of an MCP session: its step, added the first time its request id is seen. */
  step(origin: Partial<CommandOrigin>, state: StepState): void {
    const session = origin.via === 'mcp' ? origin.session : undefined;
    if (!session || this.byRequest.has(state.requestId)) return this.sync(state);
    let t = this.bySession.get(session);
    if (!t) {
      t = {
        session,
        client: origin.client ?? 'unnamed',
        tokenPrefix: state.tokenPrefix,
        startedAt: state.at,
        lastAt: state.at,
        steps: [],
        dropped: 0,
      };
      this.bySession.set(session, t);
      this.trim();
    }
    const s: MutableStep = { ...state, shape: { ...state.shape }, evidence: null };
    t.steps.push(s);
    t.lastAt = Math.max(t.lastAt, state.at);
    this.byRequest.set(s.requestId, s);
    if (t.steps.length > TRAIL_STEPS) {
      for (const old of t.steps.splice(0, t.steps.length - TRAIL_STEPS)) this.byRequest.delete(old.requestId);
      t.dropped++;
    }
  }

  /** The command's state as its activity entry now has it; `evidence` when its outcome event carried some. */
  sync(state: StepState, evidence?: CommandEvidence | null): void {
    const s = this.byRequest.get(state.requestId);
    if (!s) return;
    Object.assign(s, { outcome: state.outcome, status: state.status, latencyMs: state.latencyMs, safety: state.safety, shape: { ...state.shape } });
    if (evidence !== undefined) s.evidence = evidence ? { ...evidence } : null;
  }

  /** The relay restarted: what was in flight never ended. */
  interrupt(): void {
    for (const s of this.byRequest.values()) if (s.outcome === 'pending' || s.outcome === 'awaiting_confirmation') s.outcome = 'interrupted';
  }

  /** Newest first (by their last step). */
  list(): readonly McpTrail[] {
    return [...this.bySession.values()].sort((a, b) => b.lastAt - a.lastAt);
  }

  get(session: string): McpTrail | undefined {
    return this.bySession.get(session);
  }

  snapshot(): TrailsState {
    return { trails: [...this.bySession.values()] };
  }

  restore(s: TrailsState | undefined): void {
    this.bySession = new Map((s?.trails ?? []).map((t) => [t.session, t]));
    this.byRequest.clear();
    for (const t of this.bySession.values()) for (const step of t.steps) this.byRequest.set(step.requestId, step);
    this.trim();
  }

  private trim(): void {
    while (this.bySession.size > this.keep) {
      const [oldest] = this.bySession.values();
      for (const s of oldest.steps) this.byRequest.delete(s.requestId);
      this.bySession.delete(oldest.session);
    }
  }
}
