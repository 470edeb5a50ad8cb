import type { BridgeEvent, CommandOrigin, NewEvent } from '@svc/events';
import type { ReadModels } from '../read-models';
import { endConfirmation } from './bridge';
import { canonicalPath } from './device-control-routes';
import { evaluateSafety, type SafetySettings } from './safety';

/*
 * Confirmation through the agent's user (issue 25): a command from an MCP client that can ask its own user
 * (MCP elicitation) is put to that user first when the safety pipeline would ask about it. It is asked as
 * well as the phone, never instead: a yes lets the command go on to the phone's own confirmation, a no (or
 * no answer in time) refuses it before the phone is bothered. Both answers are safety decisions.
 */

type Out = NewEvent<BridgeEvent>[];

/** What the agent's user is asked about, when the pipeline would ask about this command now; null: it would not. */
export function agentQuestion(
  m: ReadModels,
  c: { tokenPrefix: string; path: string; body: Readonly<Record<string, unknown>> },
  settings: SafetySettings,
  now: Date,
): { verb: string; text: string } | null {
  const d = m.bridge.device(c.tokenPrefix);
  if (!d) return null;
  const verdict = evaluateSafety({ path: c.path, body: c.body, phone: d, settings, now });
  return verdict.kind === 'confirm' ? { verb: verdict.verb, text: verdict.text } : null;
}

export type AgentAsk = {
  requestId: string;
  tokenPrefix: string;
  method: string;
  path: string;
  verb: string;
  origin: CommandOrigin;
  /** How long the agent's user has to answer; silence is a denial (the confirmation sweep's). */
  timeoutSeconds: number;
};

/** The question put to the agent's user, pending like any confirmation (its deadline ends it). */
export function askAgent(m: ReadModels, a: AgentAsk, now: Date): Out {
  if (!m.bridge.device(a.tokenPrefix)) return [];
  return [
    {
      type: 'bridge.safety_decided',
      data: {
        decision: 'confirmation_requested',
        tokenPrefix: a.tokenPrefix,
        requestId: a.requestId,
        method: a.method,
        path: canonicalPath(a.path),
        verb: a.verb,
        reason: `"${a.verb}" is a destructive action: the MCP client "${a.origin.client}" asks its user before the phone is asked`,
        by: 'mcp_client',
        deadline: new Date(now.getTime() + a.timeoutSeconds * 1000).toISOString(),
        ...a.origin,
      },
    },
  ];
}

/** What the agent's user did: accepted and said yes, said no (or accepted without yes), dismissed, or the client failed to ask. */
export type AgentAnswer = 'allow' | 'deny' | 'dismiss' | 'no_answer';

/** The agent's user's answer, as the decision that ends the question; a late answer changes nothing. */
export function agentAnswered(m: ReadModels, r: { requestId: string; tokenPrefix: string; answer: AgentAnswer; origin: CommandOrigin }): Out {
  const who = `the user of MCP client "${r.origin.client}"`;
  return endConfirmation(m, r, 'mcp_client', (p) => {
    switch (r.answer) {
      case 'allow':
        return ['confirmation_allowed', `${who} allowed "${p.verb}" (the phone is asked next)`];
      case 'deny':
        return ['confirmation_denied', `${who} denied "${p.verb}"`];
      case 'dismiss':
        return ['confirmation_denied', `${who} dismissed the question about "${p.verb}"`];
      case 'no_answer':
        return ['confirmation_cancelled', `the MCP client "${r.origin.client}" could not ask its user about "${p.verb}"`];
    }
  });
}
