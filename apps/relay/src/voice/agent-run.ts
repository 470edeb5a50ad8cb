import { secureRandomBytes } from '../common/auth/secrets';
import type { AgentToolEvent } from './agent-answer';
import type { VoiceWire } from './voice-wire';

/** A run in flight says it is still going this often (the app drops a realtime turn after ~90 s of silence). */
export const PROGRESS_INTERVAL_MS = 5000;
/** Tool frames mirrored per run at most; past it tools are still counted (`completed_tool_count`), not mirrored. */
export const MAX_TOOL_FRAMES = 256;

export type RunScope = { chatSessionId: string | null; profile: string | null };

/**
 * One agent run as the realtime-agent socket mirrors it (VoiceViewModel.kt 3623-3900 reads these): the
 * relay observes the run starting (a fallback-engine turn, or the realtime model's `<brand>_run_task`),
 * the agent's own tool calls as its API streams them, and the run ending. Every frame is named in the
 * relay's spelling (`hermes.run.progress` for the public app) and says only what was observed:
 * `<brand>.run.progress` carries the time elapsed, the tool running now and the tools completed.
 */
export class AgentRun {
  readonly id = `run_${secureRandomBytes(9).toString('base64url')}`;
  private activeTool: string | null = null;
  private activeCallId: string | null = null;
  private completedTools = 0;
  private mirrored = 0;
  private lastProgressAt: number;
  ended = false;

  constructor(
    private readonly wire: VoiceWire,
    private readonly scope: RunScope,
    private readonly send: (frame: Record<string, unknown>) => void,
    private readonly now: () => number,
    private readonly startedAt = now(),
  ) {
    this.lastProgressAt = startedAt;
  }

  private base(): Record<string, unknown> {
    return { source: this.wire.brand, run_id: this.id, session_id: this.scope.chatSessionId, chat_session_id: this.scope.chatSessionId };
  }

  started(toolSurface: readonly string[]): void {
    this.send({ type: this.wire.frame('run.started'), ...this.base(), profile: this.scope.profile, tool_surface: [...toolSurface] });
  }

  /** A tool call the agent reported: mirrored, then the run's progress with the new counts. */
  tool(e: AgentToolEvent): void {
    if (this.ended) return;
    if (e.phase === 'started') {
      this.activeTool = e.name;
      this.activeCallId = e.callId;
    } else {
      if (e.phase === 'completed') this.completedTools++;
      if ((e.callId !== null && e.callId === this.activeCallId) || (e.callId === null && e.name === this.activeTool)) {
        this.activeTool = null;
        this.activeCallId = null;
      }
    }
    if (this.mirrored >= MAX_TOOL_FRAMES) return;
    this.mirrored++;
    const type = this.wire.frame(e.phase === 'started' ? 'tool.started' : e.phase === 'completed' ? 'tool.completed' : 'tool.failed');
    this.send({
      type,
      ...this.base(),
      tool_call_id: e.callId,
      tool_name: e.name,
      ...(e.label ? { message: e.label } : {}),
      ...(e.phase === 'started' ? {} : { success: e.phase === 'completed', completed_tool_count: this.completedTools }),
    });
    this.progress();
  }

  /** The periodic `run.progress` while nothing else was said for PROGRESS_INTERVAL_MS. */
  heartbeat(): void {
    if (!this.ended && this.now() - this.lastProgressAt >= PROGRESS_INTERVAL_MS) this.progress();
  }

  private progress(): void {
    const now = this.now();
    this.lastProgressAt = now;
    this.send({
      type: this.wire.frame('run.progress'),
      ...this.base(),
      status: 'running',
      message: this.activeTool ? `Using ${this.activeTool}.` : 'Still working.',
      status_key: this.activeTool ? `tool:${this.activeTool}` : 'run:working',
      should_speak: false,
      active_tool_name: this.activeTool,
      completed_tool_count: this.completedTools,
      elapsed_ms: Math.max(0, now - this.startedAt),
    });
  }

  completed(text: string | null): void {
    if (this.ended) return;
    this.ended = true;
    this.send({
      type: this.wire.frame('run.completed'),
      ...this.base(),
      success: true,
      ...(text === null ? {} : { text }),
      completed_tool_count: this.completedTools,
      elapsed_ms: Math.max(0, this.now() - this.startedAt),
    });
  }

  failed(message: string, cancelled = false): void {
    if (this.ended) return;
    this.ended = true;
    this.send({
      type: this.wire.frame(cancelled ? 'run.cancelled' : 'run.failed'),
      ...this.base(),
      success: false,
      message,
      completed_tool_count: this.completedTools,
      elapsed_ms: Math.max(0, this.now() - this.startedAt),
    });
  }
}
