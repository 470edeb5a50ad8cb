import type { ConfirmPolicy } from './fake-phone';

/*
 * The app's own safety rails, as the simulator's app mode keeps them (paths under
 * app/src/main/kotlin/com/hermesandroid/relay/): its blocklist and destructive verbs
 * (data/BridgeSafetyPreferences.kt), its confirmation modal (bridge/BridgeSafetyManager.kt) and its
 * capability grants with their idle expiry (bridge/BridgeCapabilities.kt, BridgeSafetyManager.kt:199-274,
 * 420-491). The relay defers to that expiry for the app (it keeps no deadline of its own for it).
 */

/** data/BridgeSafetyPreferences.kt:67-100, the seeded blocklist. */
export const APP_BLOCKLIST: readonly string[] = [
  'com.chase.sig.android',
  'com.wf.wellsfargomobile',
  'com.bankofamerica.digitalwallet',
  'com.usaa.mobile.android.usaa',
  'com.konylabs.capitalone',
  'com.americanexpress.android.acctsvcs.us',
  'com.discoverfinancial.mobile',
  'com.infonow.bofa',
  'uk.co.hsbc.hsbcukmobilebanking',
  'com.barclays.android.barclaysmobilebanking',
  'com.monzo.android',
  'co.uk.getmondo',
  'co.revolut.app',
  'com.starlingbank.android',
  'com.venmo',
  'com.squareup.cash',
  'com.paypal.android.p2pmobile',
  'com.coinbase.android',
  'co.mona.android',
  'com.lastpass.lpandroid',
  'com.agilebits.onepassword',
  'com.x8bit.bitwarden',
  'com.dashlane.frozenaccount',
  'com.keepersecurity.passwordmanager',
  'com.bitwarden.authenticator',
  'com.google.android.apps.authenticator2',
  'com.authy.authy',
  'com.duosecurity.duomobile',
];

/** data/BridgeSafetyPreferences.kt:107-120, matched as whole words (BridgeSafetyManager.kt:559-583). */
export const APP_DESTRUCTIVE_VERBS: readonly string[] = [
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

/** data/BridgeSafetyPreferences.kt:122-124, and the clamp of :197-198. */
export const APP_AUTO_DISABLE_MINUTES = { default: 30, min: 5, max: 120 };

/** bridge/BridgeCapabilities.kt:6-17: wire id, and whether the grant is timed (expires when idle). */
export const CAPABILITIES = {
  device_info: false,
  contacts_read: false,
  location_read: false,
  clipboard_read: false,
  clipboard_write: false,
  media_control: false,
  communications: false,
  outbound_sharing: false,
  screen_inspection: true,
  screen_control: true,
} as const;
export type Capability = keyof typeof CAPABILITIES;

/** The answer of the app's modal (null: left open, the command never answers). */
export type ModalAnswer = boolean | null;

const words = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}_]+/u);

/**
 * The app's safety state: the user granted every permanent capability and timed screen access for its idle
 * minutes (the Bridge screen's "timed access" sheet, BridgeScreen.kt:654-673); the modal is answered by `confirm`.
 */
export class AppSafety {
  readonly minutes: number;
  /** Epoch ms each timed capability ends (the app prunes them when they pass). */
  private readonly timed = new Map<Capability, number>();
  private readonly permanent = new Set<Capability>();

  constructor(
    minutes: number | null,
    private readonly now: () => number,
    readonly trustedVerbs: readonly string[],
  ) {
    const m = minutes ?? APP_AUTO_DISABLE_MINUTES.default;
    this.minutes = Math.min(Math.max(Math.trunc(m), APP_AUTO_DISABLE_MINUTES.min), APP_AUTO_DISABLE_MINUTES.max);
    for (const [c, isTimed] of Object.entries(CAPABILITIES) as Array<[Capability, boolean]>) {
      if (isTimed) this.timed.set(c, now() + this.minutes * 60_000);
      else this.permanent.add(c);
    }
  }

  /** BridgeCapabilityPolicy.allows (BridgeCapabilities.kt:102-107). */
  allows(c: Capability): boolean {
    return CAPABILITIES[c] ? (this.timed.get(c) ?? 0) > this.now() : this.permanent.has(c);
  }

  /** rescheduleAutoDisable (BridgeSafetyManager.kt:420-450): an accepted timed command moves every live timed grant to now + minutes. */
  refreshTimed(): void {
    const now = this.now();
    for (const [c, until] of this.timed) if (until > now) this.timed.set(c, now + this.minutes * 60_000);
  }

  /** The live timed grants (the app prunes the passed ones, BridgeSafetyManager.kt:436-442). */
  liveTimed(): Array<[Capability, number]> {
    const now = this.now();
    return [...this.timed].filter(([, until]) => until > now).sort(([a], [b]) => a.localeCompare(b));
  }

  /** `safety {}` of the status (BridgeStatusReporter.kt:225-230, 277-286): auto_disable_at_ms is null when nothing timed is live. */
  statusSafety(): Record<string, unknown> {
    const live = this.liveTimed().map(([, until]) => until);
    return {
      blocklist_count: APP_BLOCKLIST.length,
      destructive_verbs_count: APP_DESTRUCTIVE_VERBS.length,
      auto_disable_minutes: this.minutes,
      auto_disable_at_ms: live.length ? Math.max(...live) : null,
    };
  }

  /** `capabilities {}` of the status (BridgeStatusReporter.kt:287-313). */
  statusCapabilities(): Record<string, unknown> {
    return { schema_version: 1, permanent: [...this.permanent].sort(), timed: Object.fromEntries(this.liveTimed()), unlimited: [] };
  }

  /** checkPackageAllowed (BridgeSafetyManager.kt:283-287): exact ids; an unknown package is allowed. */
  packageAllowed(pkg: string | null | undefined): boolean {
    return !pkg || !APP_BLOCKLIST.includes(pkg);
  }

  /** requiresConfirmation (BridgeSafetyManager.kt:291-310): /tap_text, /type, /tap, /long_press with a text carrying a verb. */
  requiresConfirmation(path: string, text: string | null): boolean {
    if (!text || !text.trim() || !['/tap_text', '/type', '/tap', '/long_press'].includes(path)) return false;
    return this.firstVerb(text) !== null;
  }

  /**
   * awaitConfirmation (BridgeSafetyManager.kt:321-402): a verb the user trusts is allowed without asking; otherwise
   * the modal asks (recorded in `asked`) and the user's `confirm` answers it.
   */
  confirm(path: string, text: string, policy: ConfirmPolicy, asked: Array<{ path: string; text: string }>): ModalAnswer {
    const verb = this.firstVerb(text);
    if (verb && this.trustedVerbs.map((v) => v.toLowerCase()).includes(verb)) return true;
    asked.push({ path, text });
    return policy === 'ignore' ? null : policy === 'allow';
  }

  private firstVerb(text: string): string | null {
    const found = new Set(words(text));
    return APP_DESTRUCTIVE_VERBS.find((v) => found.has(v)) ?? null;
  }
}
