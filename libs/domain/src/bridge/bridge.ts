import type { AutoDisableSide, BridgeEvent, BridgeStatus, CommandOrigin, ConfirmationAsker, NewEvent } from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';
import type { BridgeDevice } from './bridge.projection';
import { canonicalPath } from './device-control-routes';
import { phoneDecision } from './app-wire';
import { commandShape } from './redact';
import { maskSecretDecisions } from '../secrets/secrets';
import { destructiveVerbs, evaluateSafety, isBlocked, type SafetySettings } from './safety';

type Out = NewEvent<BridgeEvent>[];
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export const AUTO_DISABLE_MAX_MINUTES = 24 * 60;

/** A `bridge.status` payload after validation (wire names mapped). */
export type BridgeStatusInput = Omit<BridgeStatus, 'autoDisableMinutes' | 'autoDisableAt' | 'autoDisableBy'> & {
  /** null: the phone did not say; the relay's default applies (to a phone whose expiry the relay keeps). */
  autoDisableMinutes: number | null;
  /** Negotiated in `system/auth` (autoDisableSide). */
  autoDisableBy: AutoDisableSide;
};

/**
 * Records a phone's status when it differs from what the relay knows. Turning the master toggle on
 * (or a first report with it on) starts the auto-disable clock; an unchanged toggle keeps the deadline.
 * A phone that keeps its own idle expiry gets no relay deadline: its minutes are recorded as it reports them.
 */
export function reportStatus(m: ReadModels, s: BridgeStatusInput, defaultAutoDisableMinutes: number, now: Date): Out {
  const prev = m.bridge.device(s.tokenPrefix);
  const relayKeeps = s.autoDisableBy === 'relay';
  const minutes = s.autoDisableMinutes ?? (relayKeeps ? defaultAutoDisableMinutes : 0);
  let autoDisableAt: number | null = null;
  if (relayKeeps && s.masterEnabled && minutes > 0) {
    const kept = prev && prev.masterEnabled && prev.autoDisableMinutes === minutes ? prev.autoDisableAt : null;
    autoDisableAt = kept ?? now.getTime() + minutes * 60_000;
  }
  const data = {
    tokenPrefix: s.tokenPrefix,
    connId: s.connId,
    deviceId: s.deviceId,
    deviceName: s.deviceName,
    screenOn: s.screenOn,
    battery: s.battery,
    currentApp: s.currentApp,
    accessibilityEnabled: s.accessibilityEnabled,
    masterEnabled: s.masterEnabled,
    deviceControlSupported: s.deviceControlSupported,
    trustedVerbs: [...new Set(s.trustedVerbs.map((v) => v.toLowerCase()))].sort(),
    autoDisableMinutes: minutes,
    autoDisableAt: iso(autoDisableAt),
    autoDisableBy: s.autoDisableBy,
  };
  if (prev && sameStatus(prev, data)) return [];
  return [{ type: 'bridge.status_reported', data }];
}

/**
 * A status that takes something away (Device Control switched off or no longer supported, a trusted
 * verb withdrawn, a blocklisted app come to the front) is recorded at once; any other change may wait
 * for the end of the connection's report window (a phone may restate its status as often as it likes).
 */
export function statusTightens(
  prev: BridgeDevice | undefined,
  s: Pick<BridgeStatusInput, 'masterEnabled' | 'deviceControlSupported' | 'trustedVerbs' | 'currentApp'>,
  blocklist: readonly string[],
): boolean {
  if (!prev) return true;
  if (prev.masterEnabled && !s.masterEnabled) return true;
  if (prev.deviceControlSupported && !s.deviceControlSupported) return true;
  const trusted = new Set(s.trustedVerbs.map((v) => v.toLowerCase()));
  if (prev.trustedVerbs.some((v) => !trusted.has(v))) return true;
  return s.currentApp !== null && s.currentApp !== prev.currentApp && isBlocked(s.currentApp, blocklist);
}

function sameStatus(d: BridgeDevice, n: Extract<BridgeEvent, { type: 'bridge.status_reported' }>['data']): boolean {
  return (
    d.connId === n.connId &&
    d.deviceName === n.deviceName &&
    d.screenOn === n.screenOn &&
    d.battery === n.battery &&
    d.currentApp === n.currentApp &&
    d.accessibilityEnabled === n.accessibilityEnabled &&
    d.masterEnabled === n.masterEnabled &&
    d.deviceControlSupported === n.deviceControlSupported &&
    d.autoDisableMinutes === n.autoDisableMinutes &&
    d.autoDisableBy === n.autoDisableBy &&
    d.trustedVerbs.join(',') === n.trustedVerbs.join(',') &&
    iso(d.autoDisableAt) === n.autoDisableAt
  );
}

export type CommandInput = {
  requestId: string;
  tokenPrefix: string;
  method: string;
  path: string;
  body: Readonly<Record<string, unknown>>;
  params: Readonly<Record<string, unknown>>;
  /** The phone's user already allowed this command's destructive verbs. */
  confirmed?: boolean;
  /** Who confirms destructive verbs: the app runs its own modal (default), or the relay asks (`bridge.confirm`). */
  confirmBy?: 'phone' | 'relay';
  /** phone-side confirmation: how long the phone may take to answer (its modal plus the command), seconds. */
  phoneAnswerSeconds?: number;
  confirmTimeoutSeconds: number;
  /** Absent for the HTTP routes; recorded on the command and the decisions about it. */
  origin?: CommandOrigin;
  /** `/type` of this named secret: decided on its value, recorded under its name (secrets.ts maskSecretDecisions). */
  secret?: string;
};

/** Gestures the app confirms only by the text of the node they name (`nodeId` / `node_id`), never at a point. */
const UNASKED_AT_POINT: ReadonlySet<string> = new Set(['/tap', '/long_press']);
const nodeTarget = (body: Readonly<Record<string, unknown>>): boolean =>
  [body.nodeId, body.node_id].some((v) => (typeof v === 'string' && v.trim() !== '') || typeof v === 'number');

/**
 * The safety pipeline's decision for one command against the phone's last status, as the events to write:
 * a refusal, a confirmation to ask for, or the command to send (the decision that let it through, then
 * `bridge.command_sent` with the pushed-back auto-disable deadline). The verdict travels inside them
 * (`bridge.safety_decided`'s decision, reason, package and verb); callers read it from there.
 */
export function planCommand(m: ReadModels, c: CommandInput, settings: SafetySettings, now: Date): Out {
  if (c.secret) return maskSecretDecisions(planCommand(m, { ...c, secret: undefined }, settings, now), c.secret);
  const d = m.bridge.device(c.tokenPrefix);
  if (!d) throw new DomainError('bridge.phone_gone', 'upstream', 'the phone left the bridge before the command could be sent');
  const path = canonicalPath(c.path);
  const base = { tokenPrefix: d.tokenPrefix, requestId: c.requestId, method: c.method, path, ...c.origin };
  const commandSent = (autoDisableAt: Date | null | undefined): NewEvent<BridgeEvent> => ({
    type: 'bridge.command_sent',
    data: {
      requestId: c.requestId,
      tokenPrefix: d.tokenPrefix,
      connId: d.connId,
      method: c.method,
      path,
      shape: commandShape(c.body, c.params),
      autoDisableAt: iso(autoDisableAt?.getTime() ?? null),
      ...c.origin,
    },
  });
  const phone = {
    masterEnabled: d.masterEnabled,
    deviceControlSupported: d.deviceControlSupported,
    currentApp: d.currentApp,
    trustedVerbs: c.confirmed ? [...d.trustedVerbs, ...destructiveVerbs(path, c.body, settings)] : d.trustedVerbs,
    // A phone that keeps its own idle expiry gets no relay deadline to push back.
    autoDisableMinutes: d.autoDisableBy === 'relay' ? d.autoDisableMinutes : 0,
  };
  const verdict = evaluateSafety({ path, body: c.body, phone, settings, now });
  switch (verdict.kind) {
    case 'deny':
      return [
        {
          type: 'bridge.safety_decided',
          data: { ...base, decision: verdict.decision, reason: verdict.reason, ...(verdict.package ? { package: verdict.package } : {}) },
        },
      ];
    case 'confirm': {
      if (c.confirmBy === 'phone') {
        // The app asks its user about a tap or long press only when it can read the node's text (a nodeId):
        // at coordinates it lets the action through unasked (BridgeCommandHandler.kt:2117-2129), so the
        // destructive label the caller gave could be confirmed by nobody.
        if (UNASKED_AT_POINT.has(path) && !nodeTarget(c.body))
          return [
            {
              type: 'bridge.safety_decided',
              data: {
                ...base,
                decision: 'unconfirmable',
                reason: `"${verdict.verb}" is a destructive action, and the phone's app asks its user about a ${path.slice(1).replace('_', ' ')} only on a node it can read`,
                verb: verdict.verb,
              },
            },
          ];
        // The app shows its own modal: the command goes now, and the phone's answer is the user's decision.
        const after = evaluateSafety({
          path,
          body: c.body,
          phone: { ...phone, trustedVerbs: [...phone.trustedVerbs, ...destructiveVerbs(path, c.body, settings)] },
          settings,
          now,
        });
        const seconds = c.phoneAnswerSeconds ?? c.confirmTimeoutSeconds;
        return [
          {
            type: 'bridge.safety_decided',
            data: {
              ...base,
              decision: 'confirmation_requested',
              reason: `"${verdict.verb}" is a destructive action: the phone asks its user`,
              verb: verdict.verb,
              by: 'phone',
              deadline: new Date(now.getTime() + seconds * 1000).toISOString(),
            },
          },
          commandSent(after.kind === 'allow' ? after.autoDisableAt : null),
        ];
      }
      return [
        {
          type: 'bridge.safety_decided',
          data: {
            ...base,
            decision: 'confirmation_requested',
            reason: verdict.reason,
            verb: verdict.verb,
            by: 'relay',
            deadline: new Date(now.getTime() + c.confirmTimeoutSeconds * 1000).toISOString(),
          },
        },
      ];
    }
    case 'allow': {
      const sent = commandSent(verdict.autoDisableAt);
      if (c.confirmed && verdict.decision === 'trusted_verb') return [sent];
      return [
        {
          type: 'bridge.safety_decided',
          data: { ...base, decision: verdict.decision, reason: verdict.reason, ...(verdict.verb ? { verb: verdict.verb } : {}) },
        },
        sent,
      ];
    }
  }
}

/** The phone's answer to `bridge.confirm`; a late or foreign answer changes nothing. */
export function resolveConfirmation(m: ReadModels, r: { requestId: string; tokenPrefix: string; allow: boolean }): Out {
  return endConfirmation(m, r, 'relay', (p) =>
    r.allow ? ['confirmation_allowed', `the phone's user allowed "${p.verb}"`] : ['confirmation_denied', `the phone's user denied "${p.verb}"`],
  );
}

type PendingConfirmation = NonNullable<ReturnType<ReadModels['bridge']['pendingConfirmation']>>;
type Ending = ['confirmation_allowed' | 'confirmation_denied' | 'confirmation_cancelled' | 'confirmation_timed_out', string];

/** The one `bridge.safety_decided` that ends a pending confirmation; a late or foreign end changes nothing. */
export function endConfirmation(
  m: ReadModels,
  r: { requestId: string; tokenPrefix: string; origin?: CommandOrigin },
  by: ConfirmationAsker,
  ending: (p: PendingConfirmation) => Ending,
): Out {
  const p = m.bridge.pendingConfirmation(r.requestId);
  if (!p || p.tokenPrefix !== r.tokenPrefix) return [];
  const [decision, reason] = ending(p);
  return [
    {
      type: 'bridge.safety_decided',
      data: { decision, tokenPrefix: p.tokenPrefix, requestId: p.requestId, method: null, path: p.path, verb: p.verb, reason, by, ...r.origin },
    },
  ];
}

/** Silence past the deadline is a denial. */
export function expireConfirmations(m: ReadModels, now: Date): Out {
  return m.bridge
    .pendingConfirmations()
    .filter((p) => p.deadline <= now.getTime())
    .map((p) => ({
      type: 'bridge.safety_decided' as const,
      data: {
        decision: 'confirmation_timed_out' as const,
        tokenPrefix: p.tokenPrefix,
        requestId: p.requestId,
        method: null,
        path: p.path,
        verb: p.verb,
        reason: `no answer to the confirmation of "${p.verb}" before the deadline`,
      },
    }));
}

/** The phone left while its user was being asked. */
export function cancelConfirmations(m: ReadModels, tokenPrefix: string, requestIds: readonly string[]): Out {
  return requestIds
    .map((id) => m.bridge.pendingConfirmation(id))
    .filter((p): p is NonNullable<typeof p> => !!p && p.tokenPrefix === tokenPrefix)
    .map((p) => ({
      type: 'bridge.safety_decided' as const,
      data: {
        decision: 'confirmation_cancelled' as const,
        tokenPrefix: p.tokenPrefix,
        requestId: p.requestId,
        method: null,
        path: p.path,
        verb: p.verb,
        reason: 'the phone disconnected before answering the confirmation',
      },
    }));
}

/** Device Control left idle past its deadline is switched off. */
export function autoDisableDue(m: ReadModels, now: Date): Out {
  return m.bridge
    .allDevices()
    .filter((d) => d.autoDisableBy === 'relay' && d.masterEnabled && d.autoDisableAt !== null && d.autoDisableAt <= now.getTime())
    .map((d) => ({
      type: 'bridge.safety_decided' as const,
      data: {
        decision: 'auto_disabled' as const,
        tokenPrefix: d.tokenPrefix,
        requestId: null,
        method: null,
        path: null,
        idleMinutes: d.autoDisableMinutes,
        reason: `no Device Control command for ${d.autoDisableMinutes} min: the relay switched Device Control off`,
      },
    }));
}

/**
 * The phone's answer to a command it confirmed itself, as the user's decision: 2xx allowed (or the phone
 * did not need to ask), 403 `user_denied` denied, anything else: the phone answered without asking.
 */
export function phoneConfirmationAnswered(
  m: ReadModels,
  r: { requestId: string; tokenPrefix: string; status: number; body: Readonly<Record<string, unknown>> },
): Out {
  const outcome = phoneDecision(r.status, r.body);
  return endConfirmation(m, r, 'phone', (p) =>
    outcome === 'allowed'
      ? ['confirmation_allowed', `the phone ran "${p.verb}" (${r.status}): its user allowed it, or the phone's own rules did not ask`]
      : outcome === 'denied'
        ? ['confirmation_denied', `the phone's user denied "${p.verb}" on the phone`]
        : ['confirmation_cancelled', `the phone answered ${r.status} without asking its user about "${p.verb}"`],
  );
}

/**
 * The phone's own modal can ask about a command the relay's rules let through (the app always asks
 * before `/send_mms`, `/share_media`, `/call`, `/send_sms`, and matches its own verb list): its 403
 * `user_denied` is the user's decision all the same, recorded as such.
 */
export function phoneDeniedUnasked(r: {
  requestId: string;
  tokenPrefix: string;
  method: string;
  path: string;
  status: number;
  body: Readonly<Record<string, unknown>>;
}): Out {
  if (phoneDecision(r.status, r.body) !== 'denied') return [];
  return [
    {
      type: 'bridge.safety_decided',
      data: {
        decision: 'confirmation_denied',
        tokenPrefix: r.tokenPrefix,
        requestId: r.requestId,
        method: r.method,
        path: r.path,
        reason: `the phone asked its user about ${r.path} on its own, and the user denied it`,
        by: 'phone',
      },
    },
  ];
}

/** A phone-confirmed command that failed (timeout, phone gone) ends its confirmation too. */
export function phoneConfirmationFailed(m: ReadModels, r: { requestId: string; tokenPrefix: string; timedOut: boolean }): Out {
  return endConfirmation(m, r, 'phone', (p) =>
    r.timedOut
      ? ['confirmation_timed_out', `the phone did not answer "${p.verb}" in time`]
      : ['confirmation_cancelled', 'the phone disconnected before answering the confirmation'],
  );
}
