import type { SafetyDecisionKind } from '@svc/events';
import { canonicalPath, routeSpec } from './device-control-routes';

/**
 * The Device Control safety pipeline (spec 4.9, WIRE.md), as one pure function. Order:
 * sideload build → master toggle → package blocklist (every target named, an intent naming none refused, then
 * the foreground app) → destructive-verb confirmation (skipped for verbs the phone trusts) → auto-disable
 * reschedule.
 */

/** Banking, payment, password-manager and 2FA apps (WIRE.md); operators extend the list in config. */
export const DEFAULT_BLOCKLIST: readonly string[] = [
  'com.chase.sig.android',
  'com.paypal.android.p2pmobile',
  'com.venmo',
  'com.squareup.cash',
  'com.zellepay.zelle',
  'com.infonow.bofa',
  'com.wf.wellsfargomobile',
  'com.citi.citimobile',
  'com.usaa.mobile.android.usaa',
  'com.konylabs.capitalone',
  'com.americanexpress.android.acctsvcs.us',
  'com.revolut.revolut',
  'com.transferwise.android',
  'com.coinbase.android',
  'com.google.android.apps.walletnfcrel',
  'com.samsung.android.spay',
  'com.x8bit.bitwarden',
  'com.agilebits.onepassword',
  'com.lastpass.lpandroid',
  'com.dashlane',
  'keepass2android.keepass2android',
  'proton.android.pass',
  'com.google.android.apps.authenticator2',
  'com.azure.authenticator',
  'com.authy.authy',
  'com.duosecurity.duomobile',
  'org.fedorahosted.freeotp',
  'com.beemdevelopment.aegis',
];

/** Whole-word, case-insensitive verbs that make a tap or typed text destructive (WIRE.md). */
export const DEFAULT_DESTRUCTIVE_VERBS: readonly string[] = [
  'send',
  'pay',
  'delete',
  'transfer',
  'confirm',
  'submit',
  'post',
  'publish',
  'buy',
  'purchase',
  'charge',
  'withdraw',
];

/**
 * Routes that are destructive by themselves, named by the verb a phone may trust (spec 2.6 names
 * `send_sms` and `call` as trusted destructive verbs).
 */
export const DEFAULT_ROUTE_VERBS: Readonly<Record<string, string>> = { '/send_sms': 'send_sms', '/call': 'call' };

export type SafetySettings = {
  blocklist: readonly string[];
  destructiveVerbs: readonly string[];
  routeVerbs: Readonly<Record<string, string>>;
};

export const DEFAULT_SAFETY_SETTINGS: SafetySettings = {
  blocklist: DEFAULT_BLOCKLIST,
  destructiveVerbs: DEFAULT_DESTRUCTIVE_VERBS,
  routeVerbs: DEFAULT_ROUTE_VERBS,
};

/** What the phone last reported (bridge.status). */
export type PhoneSafetyState = {
  masterEnabled: boolean;
  deviceControlSupported: boolean;
  currentApp: string | null;
  trustedVerbs: readonly string[];
  /** 0: the phone turned auto-disable off. */
  autoDisableMinutes: number;
};

export type SafetyInput = {
  path: string;
  body: Readonly<Record<string, unknown>>;
  phone: PhoneSafetyState;
  settings: SafetySettings;
  now: Date;
};

export type SafetyVerdict =
  | {
      kind: 'allow';
      decision: Extract<SafetyDecisionKind, 'allow' | 'exempt' | 'trusted_verb'>;
      reason: string;
      verb?: string;
      autoDisableAt: Date | null;
    }
  | {
      kind: 'deny';
      decision: Extract<SafetyDecisionKind, 'sideload_only' | 'master_off' | 'blocked_package' | 'implicit_intent'>;
      reason: string;
      package?: string;
    }
  | { kind: 'confirm'; decision: 'confirmation_requested'; reason: string; verb: string; text: string };

export function evaluateSafety(input: SafetyInput): SafetyVerdict {
  const path = canonicalPath(input.path);
  const spec = routeSpec(path);
  const { phone, settings, body } = input;
  if (!phone.deviceControlSupported) {
    return { kind: 'deny', decision: 'sideload_only', reason: 'the phone reports a build without device control (device_control_supported=false)' };
  }
  if (!phone.masterEnabled && !spec?.masterExempt) {
    return { kind: 'deny', decision: 'master_off', reason: 'Device Control is switched off on the phone (master toggle)' };
  }
  const targets = targetPackages(path, body);
  const blocked = targets.find((p) => isBlocked(p, settings.blocklist));
  if (blocked) return { kind: 'deny', decision: 'blocked_package', reason: `target package ${blocked} is on the blocklist`, package: blocked };
  if (targets.length === 0 && NAMES_ITS_APP.has(path)) {
    return {
      kind: 'deny',
      decision: 'implicit_intent',
      reason: `${path} names no package or component: Android would pick the app that handles it, which the blocklist cannot see`,
    };
  }
  if (spec?.foregroundGate && phone.currentApp && isBlocked(phone.currentApp, settings.blocklist)) {
    return { kind: 'deny', decision: 'blocked_package', reason: `foreground app ${phone.currentApp} is on the blocklist`, package: phone.currentApp };
  }
  const trusted = new Set(phone.trustedVerbs.map((v) => v.toLowerCase()));
  const verbs = destructiveVerbs(path, body, settings);
  const untrusted = verbs.filter((v) => !trusted.has(v));
  const autoDisableAt =
    spec?.probe || spec?.masterExempt || phone.autoDisableMinutes <= 0 ? null : new Date(input.now.getTime() + phone.autoDisableMinutes * 60_000);
  if (untrusted.length > 0) {
    return {
      kind: 'confirm',
      decision: 'confirmation_requested',
      reason: `"${untrusted[0]}" is a destructive action: asking the phone's user`,
      verb: untrusted[0],
      text: confirmationText(path, body, untrusted[0]),
    };
  }
  if (verbs.length > 0)
    return { kind: 'allow', decision: 'trusted_verb', reason: `the phone trusts "${verbs.join('", "')}"`, verb: verbs[0], autoDisableAt };
  if (spec?.masterExempt) return { kind: 'allow', decision: 'exempt', reason: `${path} passes the master toggle`, autoDisableAt: null };
  return { kind: 'allow', decision: 'allow', reason: 'passed master toggle, blocklist and destructive-verb checks', autoDisableAt };
}

/** Exact package ids, or `prefix.*` entries that cover a vendor's apps. */
export function isBlocked(pkg: string, blocklist: readonly string[]): boolean {
  const p = pkg.trim().toLowerCase();
  for (const raw of blocklist) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry.endsWith('.*') ? p.startsWith(entry.slice(0, -1)) || p === entry.slice(0, -2) : p === entry) return true;
  }
  return false;
}

/**
 * Routes Android resolves to an app when the command names none (an implicit intent or broadcast): the
 * relay cannot know which app that is, so the blocklist can hold only if the command names it (issue 34).
 * `/share_media` and `/send_mms` without a package open the system's chooser, where the user picks.
 */
const NAMES_ITS_APP: ReadonlySet<string> = new Set(['/send_intent', '/broadcast']);

/**
 * The packages a command launches or addresses (open_app, intents, share targets), each of them: an intent
 * with both a package and a component reaches the component's app, so both are checked. Empty: it names none.
 */
export function targetPackages(path: string, body: Readonly<Record<string, unknown>>): string[] {
  switch (canonicalPath(path)) {
    case '/open_app':
    case '/broadcast':
    case '/share_media':
    case '/send_mms':
      return named(str(body.package));
    case '/send_intent':
      return named(str(body.package), str(body.component)?.split('/')[0].trim());
    default:
      return [];
  }
}

const named = (...packages: Array<string | null | undefined>): string[] => packages.filter((p): p is string => !!p);

/** What a relay-side confirmation shows the phone's user: the text the command acts on, else its verb. */
export function confirmationText(path: string, body: Readonly<Record<string, unknown>>, verb: string): string {
  return destructiveText(path, body) ?? verb;
}

/** The user-visible text a command acts on, where the destructive gate reads it. */
export function destructiveText(path: string, body: Readonly<Record<string, unknown>>): string | null {
  switch (canonicalPath(path)) {
    case '/tap_text':
    case '/type':
      return str(body.text);
    case '/tap':
      return str(body.text) ?? str(body.hint);
    // A long press on "Delete" is as destructive as a tap on it: the element tools send its label as `text`,
    // which the app's /long_press does not read (it takes x, y, node_id and duration: BridgeCommandHandler.kt:1027-1039).
    case '/long_press':
      return str(body.text);
    default:
      return null;
  }
}

/** Destructive verbs a command carries: the route's own verb, then whole words of its text. */
export function destructiveVerbs(path: string, body: Readonly<Record<string, unknown>>, settings: SafetySettings): string[] {
  const out: string[] = [];
  const routeVerb = settings.routeVerbs[canonicalPath(path)];
  if (routeVerb) out.push(routeVerb.toLowerCase());
  const text = destructiveText(path, body);
  if (text) {
    const verbs = new Set(settings.destructiveVerbs.map((v) => v.toLowerCase()));
    // In reading order, so the phone asks about the first destructive word the user sees.
    for (const w of text.toLowerCase().split(/[^\p{L}\p{N}_]+/u)) if (verbs.has(w) && !out.includes(w)) out.push(w);
  }
  return out;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim().length > 0 ? v.trim() : null);
