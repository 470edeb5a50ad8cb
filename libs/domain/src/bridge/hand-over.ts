import type { BridgeEvent, CommandOrigin, NewEvent, SafetyDecisionKind } from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';

/*
 * Hand-over to a human (issue 40, item 5): the agent asks the phone's user to take over, and waits for
 * their answer. It is a confirmation like a destructive action's (`bridge.confirm`, the same pending
 * question, the same deadline sweep on the relay's clock), asked under the verb `hand_over` on the path
 * `/hand_over`: Allow means "done", Deny "declined", silence "timed out".
 */

export const HAND_OVER_PATH = '/hand_over';
export const HAND_OVER_VERB = 'hand_over';
/** The message an agent may put to the user: at most this many characters, no control characters. */
export const HAND_OVER_MESSAGE_MAX = 500;
/** How long the agent may wait for the user (seconds); the default when it does not say. */
export const HAND_OVER_TIMEOUT_MAX = 600;
export const HAND_OVER_TIMEOUT_DEFAULT = 120;

export type HandOverAnswer = 'done' | 'declined' | 'timed_out' | 'phone_gone';

/** What the phone shows: the agent's message, and what each button means. */
export function handOverText(message: string): string {
  return `Take over: ${message}. Tap Allow when you are done, Deny to refuse.`;
}

export function checkHandOverMessage(message: string): string {
  const m = message.trim();
  if (m.length === 0 || m.length > HAND_OVER_MESSAGE_MAX)
    throw new DomainError('bridge.bad_hand_over', 'invalid', `message is 1 to ${HAND_OVER_MESSAGE_MAX} characters`);
  for (let i = 0; i < m.length; i++) {
    const c = m.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) throw new DomainError('bridge.bad_hand_over', 'invalid', 'message holds no control characters (newlines included)');
  }
  return m;
}

/** The question, pending like any confirmation until the user answers or its deadline passes. */
export function askHandOver(
  m: ReadModels,
  a: { requestId: string; tokenPrefix: string; timeoutSeconds: number; origin?: CommandOrigin },
  now: Date,
): NewEvent<BridgeEvent>[] {
  if (!m.bridge.device(a.tokenPrefix))
    throw new DomainError('bridge.phone_gone', 'upstream', 'the phone left the bridge before its user could be asked');
  return [
    {
      type: 'bridge.safety_decided',
      data: {
        decision: 'confirmation_requested',
        tokenPrefix: a.tokenPrefix,
        requestId: a.requestId,
        method: 'POST',
        path: HAND_OVER_PATH,
        verb: HAND_OVER_VERB,
        reason: `the agent hands the phone over to its user for up to ${a.timeoutSeconds} s`,
        by: 'relay',
        deadline: new Date(now.getTime() + a.timeoutSeconds * 1000).toISOString(),
        ...a.origin,
      },
    },
  ];
}

/** The confirmation's ending as the agent is told it. */
export function handOverAnswer(decision: SafetyDecisionKind): HandOverAnswer {
  switch (decision) {
    case 'confirmation_allowed':
      return 'done';
    case 'confirmation_denied':
      return 'declined';
    case 'confirmation_timed_out':
      return 'timed_out';
    default:
      return 'phone_gone';
  }
}
