import type { SafetyDecisionKind } from '@svc/events';

export type CommandReply = { status: number; body: Record<string, unknown> };

/** A command sent to a phone, waiting for its `bridge.response`. */
export type SentCommand = {
  requestId: string;
  connId: string;
  tokenPrefix: string;
  path: string;
  method: string;
  /** The app confirms this command itself: its answer is the user's decision. */
  phoneConfirms: boolean;
  /** A secret's `/type`: its value taken out of the phone's answer before anything reads it (secrets.ts scrubSecret). */
  scrub?: (body: Record<string, unknown>) => Record<string, unknown>;
  started: number;
  /**
   * Evidence (bridge-evidence.ts): the screen's hash before the command went (null: the phone gave none);
   * undefined when the command takes none. `quiet`: the relay's own ask for that hash, which writes no event.
   */
  before?: string | null;
  quiet?: boolean;
  /** When the answer came (performance.now()): its latency leaves out the hash asked after it. */
  answeredAt?: number;
  timer: NodeJS.Timeout;
  resolve: (r: CommandReply) => void;
  reject: (e: Error) => void;
};

/** A command on its way to the phone, as the relay sends it. */
export type OutgoingCommand = {
  requestId: string;
  method: string;
  path: string;
  params: Record<string, unknown>;
  body: Record<string, unknown>;
  scrub?: SentCommand['scrub'];
};

/**
 * A command held until the phone's user answers the relay's `bridge.confirm`. `outlivesSocket`: a question put
 * another way (a Thread hand-over: the Threads queue outlives the socket), which a disconnect does not end.
 */
export type ConfirmingCommand = { connId: string; tokenPrefix: string; resolve: (decision: SafetyDecisionKind) => void; outlivesSocket?: boolean };

type Entry = { stage: 'confirming'; waiter: ConfirmingCommand } | { stage: 'sent'; sent: SentCommand };

/**
 * Every Device Control command between its decision and its end, in one map by request id: first
 * waiting for a relay-side confirmation (if it needs one), then sent and waiting for the phone's answer.
 * Only the socket a command went to may move it on.
 */
export class InFlightCommands {
  private readonly byId = new Map<string, Entry>();

  confirming(requestId: string, waiter: ConfirmingCommand): void {
    this.byId.set(requestId, { stage: 'confirming', waiter });
  }

  /** The confirmation waiting under this id, if any. */
  confirmation(requestId: string): ConfirmingCommand | undefined {
    const e = this.byId.get(requestId);
    return e?.stage === 'confirming' ? e.waiter : undefined;
  }

  /** Ends a confirmation (its decision is in the log); the command may be sent under the same id next. */
  endConfirmation(requestId: string): ConfirmingCommand | undefined {
    const w = this.confirmation(requestId);
    if (w) this.byId.delete(requestId);
    return w;
  }

  /** Request ids of the confirmations that end with one socket (not those that outlive it). */
  confirmationsOn(connId: string): string[] {
    return [...this.byId].flatMap(([id, e]) => (e.stage === 'confirming' && e.waiter.connId === connId && !e.waiter.outlivesSocket ? [id] : []));
  }

  sent(cmd: SentCommand): void {
    this.byId.set(cmd.requestId, { stage: 'sent', sent: cmd });
  }

  /** The sent command under this id, if any. */
  command(requestId: string): SentCommand | undefined {
    const e = this.byId.get(requestId);
    return e?.stage === 'sent' ? e.sent : undefined;
  }

  /** Removes a sent command; false if it had already settled. */
  settle(cmd: SentCommand): boolean {
    if (this.command(cmd.requestId) !== cmd) return false;
    this.byId.delete(cmd.requestId);
    return true;
  }

  sentCommands(): SentCommand[] {
    return [...this.byId.values()].flatMap((e) => (e.stage === 'sent' ? [e.sent] : []));
  }

  get sentCount(): number {
    return this.sentCommands().length;
  }
}
