import type { BridgeEvent, CommandOrigin, NewEvent, PhoneReplyReceived, PhoneThreadsEvent, SafetyDecisionKind } from '@svc/events';
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

/** What the phone shows in `bridge.confirm`: the agent's message, and what each button means. */
export function handOverText(message: string): string {
  return `Take over: ${message}. Tap Allow when you are done, Deny to refuse.`;
}

/**
 * What the phone shows as a Thread message when it cannot show `bridge.confirm` (the unmodified app): the
 * app raises it as a notification with a reply box and in its Thread view (ProactiveMessageHandler.kt:104-124).
 */
export function handOverThreadText(message: string): string {
  return `The agent asks you to take over: ${message}. Reply "done" when you have finished, or "no" to refuse.`;
}

/** The longest note (the user's own words) handed back to the agent. */
export const HAND_OVER_NOTE_MAX = 500;
const DONE_WORDS = new Set(['done', 'ok', 'okay', 'yes', 'finished']);
const DECLINE_WORDS = new Set(['no', 'deny', 'stop']);

/**
 * A Thread reply read as the user's answer, with no regular expression (peer text): "done", "ok", "yes",
 * "finished" are done; "no", "deny", "stop" declined (either case, trailing punctuation ignored); anything
 * else is done with the user's words as a note, control characters as spaces, at most HAND_OVER_NOTE_MAX.
 */
export function readHandOverReply(text: string): { answer: 'done' | 'declined'; note?: string } {
  const head = text.slice(0, 64).trim().toLowerCase();
  let end = head.length;
  while (end > 0 && '.!?,;: '.includes(head[end - 1])) end--;
  const word = head.slice(0, end);
  if (DONE_WORDS.has(word) && text.trim().length <= 64) return { answer: 'done' };
  if (DECLINE_WORDS.has(word) && text.trim().length <= 64) return { answer: 'declined' };
  let note = '';
  for (const ch of text.slice(0, HAND_OVER_NOTE_MAX * 2)) {
    if (note.length >= HAND_OVER_NOTE_MAX) break;
    const c = ch.codePointAt(0)!;
    note += c < 0x20 || (c >= 0x7f && c < 0xa0) || c === 0x2028 || c === 0x2029 ? ' ' : ch;
  }
  return { answer: 'done', note: note.trim().slice(0, HAND_OVER_NOTE_MAX) };
}

/**
 * The Thread hand-over this reply answers, if any: the one its `reply_to` names (the notification's reply box
 * sets it, ProactiveReplyReceiver.kt:57,90), or, with no `reply_to` (the Thread view's composer sends none,
 * ChatViewModel.kt:6628), the newest delivered one in the reply's chat. Only the asked phone answers it. The
 * hand-over's message id is its request id (relay bridge/hand-over.ts), so a `bridge.confirm` one never matches.
 */
function threadHandOverOf(m: ReadModels, r: PhoneReplyReceived['data']) {
  const mine = (id: string) => {
    const p = m.bridge.pendingConfirmation(id);
    return p && p.path === HAND_OVER_PATH && p.tokenPrefix === r.tokenPrefix ? p : undefined;
  };
  if (r.replyTo) return m.phoneThreads.message(r.replyTo) ? mine(r.replyTo) : undefined;
  return m.bridge
    .pendingConfirmations()
    .filter((p) => {
      const msg = m.phoneThreads.message(p.requestId);
      return msg?.chatId === r.chatId && msg.state === 'delivered' && mine(p.requestId);
    })
    .at(-1);
}

/**
 * A reply that answers a Thread hand-over ends it, in the same append as the reply: taken by the hand-over
 * (`phone.replies_handed`, by `hand_over`), so the host's agent is not handed the same answer as an ordinary
 * reply, then the decision (allowed: done, denied: declined). Any other reply: nothing.
 */
export function handOverReplied(m: ReadModels, r: PhoneReplyReceived['data']): NewEvent<BridgeEvent | PhoneThreadsEvent>[] {
  const p = threadHandOverOf(m, r);
  if (!p) return [];
  const { answer } = readHandOverReply(r.text);
  return [
    { type: 'phone.replies_handed', data: { replyIds: [r.replyId], by: `hand_over:${p.requestId}` } },
    {
      type: 'bridge.safety_decided',
      data: {
        decision: answer === 'done' ? 'confirmation_allowed' : 'confirmation_denied',
        tokenPrefix: p.tokenPrefix,
        requestId: p.requestId,
        method: null,
        path: p.path,
        verb: p.verb,
        reason: answer === 'done' ? "the phone's user replied in the Thread: done" : "the phone's user replied in the Thread: declined",
        by: 'relay',
      },
    },
  ];
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
