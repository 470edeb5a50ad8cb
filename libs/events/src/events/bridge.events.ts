import type { Ev } from '../event';

/**
 * Bridge (Device Control) events. Bodies are never recorded: a command is logged as its route and
 * `shape` (field -> type, plus the few fields that carry no user content, like coordinates or a
 * package id). Texts typed, SMS bodies, clipboard contents and contact queries never enter the log.
 */

/** What a phone last said about itself on the bridge channel (only written when something changed). */
export type BridgeStatusReported = Ev<'bridge.status_reported', BridgeStatus>;

/** A phone's state on the bridge channel, as the relay records it. */
export type BridgeStatus = {
  tokenPrefix: string;
  connId: string;
  deviceId: string;
  deviceName: string;
  screenOn: boolean | null;
  battery: number | null;
  currentApp: string | null;
  accessibilityEnabled: boolean | null;
  masterEnabled: boolean;
  deviceControlSupported: boolean;
  trustedVerbs: string[];
  /** The idle minutes that switch Device Control off (0: never); for `autoDisableBy: 'phone'`, what the phone reports (0: none reported). */
  autoDisableMinutes: number;
  /** ISO: the relay's deadline; null while the master toggle is off, auto-disable is off (0 minutes), or the phone keeps its own. */
  autoDisableAt: string | null;
  /**
   * Who switches Device Control off after it was idle: `relay` (its deadline, then `bridge.master_disabled`), for a
   * phone that says in `system/auth` `supports.bridge_master_disabled: true` that it honours that frame; `phone`
   * (its own timer; the relay keeps none) for every other phone, the app included. Absent on older events: relay.
   */
  autoDisableBy?: AutoDisableSide;
};

export type AutoDisableSide = 'phone' | 'relay';

/** The operator chose which phone Device Control drives when a call names none. */
export type BridgeActiveSelected = Ev<'bridge.active_selected', { tokenPrefix: string; deviceId: string; by: string }>;

/**
 * How a command came, when not over the HTTP routes (absent: HTTP): `mcp` is the relay's MCP server, and
 * `client` the MCP client's own name for itself (its `clientInfo.name`, bounded and sanitized). `session`
 * (from v2 of `bridge.command_sent` and `bridge.safety_decided`; absent before): the relay's own 12-hex name
 * for the MCP session, made for the record and never the session's `Mcp-Session-Id`, so the log groups an
 * agent's steps without holding a handle to its session.
 */
export type CommandOrigin = { via: 'mcp'; client: string; session?: string };

/**
 * The screen's `/screen_hash` just before a command went to the phone and just after it answered (issue 40),
 * asked by the relay itself (those asks are not commands of their own and write no events). A hash the phone
 * could not give (an app without the route, a timeout) is null; the command's outcome never depends on it.
 */
export type CommandEvidence = { before: string | null; after: string | null };

/** Scalar leaves of a body/query reduced to their type, except fields that carry no user content. */
export type CommandShape = Record<string, string | number | boolean | null>;

export type BridgeCommandSent = Ev<
  'bridge.command_sent',
  {
    requestId: string;
    tokenPrefix: string;
    connId: string;
    method: string;
    path: string;
    shape: CommandShape;
    /** The pushed-back auto-disable deadline (ISO), or null when this route does not reschedule it. */
    autoDisableAt: string | null;
    /** `/type` of a named secret (MCP android_type_secret): its name, never its value (secret.events.ts). */
    secret?: string;
  } & Partial<CommandOrigin>
>;

export type BridgeCommandAnswered = Ev<
  'bridge.command_answered',
  {
    requestId: string;
    tokenPrefix: string;
    path: string;
    status: number;
    latencyMs: number;
    /**
     * The foreground package the answer showed (`/current_app`, `/screen`), when it differs from the one
     * the relay knew: the blocklist then checks the phone as it is, not as its last status said.
     */
    currentApp?: string;
    /** v2: the screen before and after, for the commands that change it (`bridge-evidence.ts`); null for the rest, and on v1 records. */
    evidence: CommandEvidence | null;
  }
>;

export type BridgeFailure = 'timeout' | 'phone_gone' | 'session_revoked' | 'bad_response';
export type BridgeCommandFailed = Ev<
  'bridge.command_failed',
  {
    requestId: string;
    tokenPrefix: string;
    path: string;
    reason: BridgeFailure;
    latencyMs: number;
    /** v2: as on `bridge.command_answered` (`after` is null: the phone did not answer). */
    evidence: CommandEvidence | null;
  }
>;

export type SafetyDecisionKind =
  | 'allow'
  | 'exempt'
  | 'trusted_verb'
  | 'sideload_only'
  | 'master_off'
  | 'blocked_package'
  /** `/send_intent` or `/broadcast` naming no package or component (issue 34): no app the blocklist could check. */
  | 'implicit_intent'
  /** A destructive `/tap` or `/long_press` at coordinates on a phone whose app asks its user only about a node it reads: nobody could confirm it. */
  | 'unconfirmable'
  | 'confirmation_requested'
  | 'confirmation_allowed'
  | 'confirmation_denied'
  | 'confirmation_timed_out'
  | 'confirmation_cancelled'
  | 'auto_disabled';

/** One step of the safety pipeline, in words an auditor can read. */
export type BridgeSafetyDecided = Ev<
  'bridge.safety_decided',
  {
    decision: SafetyDecisionKind;
    tokenPrefix: string;
    /** null for decisions not tied to one command (auto-disable). */
    requestId: string | null;
    method: string | null;
    path: string | null;
    reason: string;
    package?: string;
    verb?: string;
    /** confirmation_requested: when silence becomes a denial (ISO). */
    deadline?: string;
    /** auto_disabled: the idle minutes that elapsed. */
    idleMinutes?: number;
    /**
     * confirmation_*: who asks the user. `phone`: the app's own modal (the command goes to the phone at
     * once and its answer is the decision); `relay`: `bridge.confirm`; `mcp_client`: the MCP client that
     * sent the command asked its own user (elicitation), before the phone is asked. Absent on older events: relay.
     */
    by?: ConfirmationAsker;
  } & Partial<CommandOrigin>
>;

export type ConfirmationAsker = 'phone' | 'relay' | 'mcp_client';

export type BridgeEvent =
  BridgeStatusReported | BridgeActiveSelected | BridgeCommandSent | BridgeCommandAnswered | BridgeCommandFailed | BridgeSafetyDecided;
