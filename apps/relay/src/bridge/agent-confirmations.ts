import {
  agentAnswered,
  agentQuestion,
  askAgent,
  DomainError,
  SECRET_VERB,
  secretLabel,
  type AgentAnswer,
  type BridgeDevice,
  type SafetySettings,
} from '@svc/domain';
import type { CommandOrigin, SafetyDecisionKind } from '@svc/events';
import type { Logger } from 'pino';
import type { Clock } from '../common/loop/clock';
import type { CommandLoop } from '../common/loop/command-loop';
import type { InFlightCommands } from './in-flight-commands';

/** What the agent's user is asked: the destructive verb, the text it was found in, the route and the phone. */
export type AgentQuestion = { verb: string; text: string; path: string; deviceName: string; timeoutMs: number };

/** Asks the user of the client that sent a command (MCP elicitation); aborted when the decision was made otherwise. */
export type AskAgent = (q: AgentQuestion, signal: AbortSignal) => Promise<AgentAnswer>;

/**
 * Where a Device Control command came from when not over HTTP, and how to ask its user (when its client can);
 * `secret`: the command types this named secret (its value is the body's text, never shown or recorded).
 */
export type CommandFrom = { origin: CommandOrigin; ask?: AskAgent; secret?: { name: string; value: string } };

type Command = { requestId: string; method: string; path: string; body: Record<string, unknown>; actor: string };

/**
 * Confirmation through the agent's user (libs/domain agent-confirmation.ts), run before the safety
 * pipeline plans the command: the question is a pending confirmation like the phone's (its deadline swept
 * by the injected clock, cancelled when the phone leaves), the client's answer a decision in the log, and
 * the command goes on only after a yes, to be confirmed by the phone as well.
 */
export class AgentConfirmations {
  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly inFlight: InFlightCommands,
    private readonly settings: SafetySettings,
    private readonly timeoutSeconds: number,
    private readonly logger: Logger,
  ) {}

  /** Resolves when the agent's user allowed the command (or nobody needs asking); throws the refusal otherwise. */
  async confirm(device: BridgeDevice, c: Command, from: CommandFrom): Promise<void> {
    const ask = from.ask;
    if (!ask) return;
    const found = agentQuestion(this.loop.models, { tokenPrefix: device.tokenPrefix, path: c.path, body: c.body }, this.settings, this.clock.now());
    if (!found) return;
    // A secret's question names the secret: its verb and text would be words of the value.
    const q = from.secret ? { verb: SECRET_VERB, text: secretLabel(from.secret.name) } : found;
    const origin = from.origin;
    const target = { requestId: c.requestId, tokenPrefix: device.tokenPrefix };
    // Registered before the question is written: the answer's event may come back before the write resolves.
    const decided = new Promise<SafetyDecisionKind>((resolve) =>
      this.inFlight.confirming(c.requestId, { connId: device.connId, ...target, resolve }),
    );
    const asked = await this.loop.run(c.actor, (m, now) =>
      askAgent(m, { ...target, method: c.method, path: c.path, verb: q.verb, origin, timeoutSeconds: this.timeoutSeconds }, now),
    );
    if (asked.length === 0) {
      this.inFlight.endConfirmation(c.requestId);
      throw new DomainError('bridge.phone_gone', 'upstream', 'the phone left the bridge before its user could be asked');
    }
    const stop = new AbortController();
    let unasked = false;
    const answer = (a: AgentAnswer) => this.loop.run(c.actor, (m) => agentAnswered(m, { ...target, answer: a, origin }));
    // The client's own timeout runs a little past the deadline: the sweep (on the relay's clock) decides silence.
    ask({ ...q, path: c.path, deviceName: device.deviceName, timeoutMs: this.timeoutSeconds * 1000 + 5000 }, stop.signal)
      .then(answer, () => ((unasked = !stop.signal.aborted), answer('no_answer')))
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'the agent user’s answer was not recorded'));
    const decision = await decided;
    stop.abort();
    if (decision === 'confirmation_allowed') return;
    if (decision === 'confirmation_cancelled') {
      throw unasked
        ? new DomainError(
            'bridge.confirmation_unasked',
            'forbidden',
            `the MCP client "${origin.client}" could not ask its user about "${q.verb}": not sent`,
          )
        : new DomainError('bridge.phone_gone', 'upstream', 'the phone disconnected before the destructive action could be confirmed');
    }
    throw new DomainError('bridge.confirmation_denied', 'forbidden', 'user denied destructive action', {
      reason: 'confirmation_denied_or_timeout',
      asked: 'mcp_client',
    });
  }
}
