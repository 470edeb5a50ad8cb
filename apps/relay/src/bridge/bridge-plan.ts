import { DEFAULT_SAFETY_SETTINGS, DomainError, type SafetySettings } from '@svc/domain';
import type { BridgeEvent, SafetyDecisionKind, StoredEvent } from '@svc/events';
import type { BridgeConfig } from '../common/config/relay-config';

/*
 * The safety pipeline's verdict as the HTTP side acts on it: the planner (libs/domain planCommand) writes
 * its decision as events; these read it back and turn a refusal into the error the caller gets.
 */

/** The decisions that end a confirmation (its waiter is resolved with one). */
export const CONFIRM_OUTCOMES = new Set<SafetyDecisionKind>([
  'confirmation_allowed',
  'confirmation_denied',
  'confirmation_timed_out',
  'confirmation_cancelled',
]);

/** The safety pipeline's settings: the defaults extended by RELAY_BRIDGE_BLOCKLIST and RELAY_BRIDGE_DESTRUCTIVE_VERBS. */
export function safetySettingsOf(b: BridgeConfig): SafetySettings {
  return {
    blocklist: [...DEFAULT_SAFETY_SETTINGS.blocklist, ...b.blocklist],
    destructiveVerbs: [...new Set([...DEFAULT_SAFETY_SETTINGS.destructiveVerbs, ...b.extraDestructiveVerbs])],
    routeVerbs: DEFAULT_SAFETY_SETTINGS.routeVerbs,
  };
}

/** The caller's error when the phone left (or its session ended) before the command was answered. */
export const phoneGone = (why: string): DomainError => new DomainError('bridge.phone_gone', 'upstream', why);

/** The caller's error when the phone sent no answer in time. */
export const phoneTimedOut = (ms: number): DomainError =>
  new DomainError('bridge.timeout', 'timeout', `the phone did not answer within ${Math.round(ms / 100) / 10} s`);

/** The caller's error when the phone's user said no, or did not answer in time. */
export function confirmationDenied(): DomainError {
  return new DomainError('bridge.confirmation_denied', 'forbidden', 'user denied destructive action', { reason: 'confirmation_denied_or_timeout' });
}

export type Refusal = {
  decision: Extract<SafetyDecisionKind, 'sideload_only' | 'master_off' | 'blocked_package' | 'implicit_intent' | 'unconfirmable'>;
  package?: string;
  verb?: string;
};
const REFUSED: ReadonlySet<SafetyDecisionKind> = new Set(['sideload_only', 'master_off', 'blocked_package', 'implicit_intent', 'unconfirmable']);
export type Plan = { sent: boolean; asked: string | null; refused: Refusal | null };

/** What the planner decided, read from the events it wrote (the verdict travels inside them). */
export function planOf(events: readonly StoredEvent<BridgeEvent>[]): Plan {
  const plan: Plan = { sent: false, asked: null, refused: null };
  for (const e of events) {
    if (e.type === 'bridge.command_sent') plan.sent = true;
    if (e.type !== 'bridge.safety_decided') continue;
    const { decision, verb } = e.data;
    if (decision === 'confirmation_requested') plan.asked = verb ?? 'confirm';
    else if (REFUSED.has(decision)) plan.refused = { decision: decision as Refusal['decision'], package: e.data.package, verb };
  }
  return plan;
}

export function refusal(v: Refusal): DomainError {
  switch (v.decision) {
    case 'sideload_only':
      return new DomainError('bridge.sideload_only', 'forbidden', 'Device Control needs the sideload build of the app on the phone', {
        error_code: 'device_control_sideload_only',
      });
    case 'master_off':
      return new DomainError('bridge.master_disabled', 'forbidden', 'Device Control is switched off on the phone', { reason: 'master_disabled' });
    case 'blocked_package':
      return new DomainError('bridge.blocked_package', 'forbidden', `blocked package ${v.package}`, {
        package: v.package,
        reason: 'blocked_package',
        reasonPhrase: `Blocked package ${v.package}`,
      });
    case 'implicit_intent':
      // android_tool.py:1635/1671 give the agent str(HTTPError), which python requests builds from the
      // status line alone: the reason phrase carries the why.
      return new DomainError(
        'bridge.implicit_intent',
        'forbidden',
        'an intent must name the app it is for (package or component): the relay cannot tell which app Android would pick, so it cannot keep blocklisted apps out (find package names with /get_apps; media keys: /media)',
        { reason: 'implicit_intent', reasonPhrase: 'Implicit intent refused: name the package or component' },
      );
    case 'unconfirmable':
      return new DomainError(
        'bridge.unconfirmable',
        'forbidden',
        `"${v.verb ?? 'this'}" is a destructive action, and the app on this phone asks its user only about a node it can read: tap or long-press it by nodeId (or, over MCP, by ref), not at coordinates`,
        { reason: 'unconfirmable', verb: v.verb, reasonPhrase: 'Destructive action at coordinates: target the node' },
      );
  }
}
