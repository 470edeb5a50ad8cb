import type { StoredEvent } from './event';
import type { RelayEventType } from './relay-event';

/**
 * Each event type's data schema version, stored in the record's `v` (every record so far carries `v: 1`;
 * an absent `v` reads as 1). The chain hashes a record's bytes, so an old record is never rewritten: a
 * shape change bumps the type's version here, new records carry it, and an upcaster per step turns an older
 * record's data into the current shape as it is read (start-up, replay). Typed by the union: a new event
 * type does not compile until it has a version.
 */
export const EVENT_VERSIONS: { readonly [T in RelayEventType]: number } = {
  'auth.failed': 1,
  'bridge.active_selected': 1,
  'bridge.command_answered': 2,
  'bridge.command_failed': 2,
  'bridge.command_sent': 2,
  'bridge.safety_decided': 2,
  'bridge.status_reported': 1,
  'chat.image_activity': 1,
  'clipboard.consumed': 1,
  'clipboard.discarded': 1,
  'clipboard.staged': 1,
  'console.link_issued': 1,
  'console.signed_in': 1,
  'console.signed_out': 1,
  'desktop.client_reported': 1,
  'desktop.command_completed': 1,
  'desktop.command_sent': 1,
  'desktop.context_reported': 1,
  'desktop.control_session_ended': 1,
  'desktop.control_session_started': 1,
  'log.pruned': 1,
  'media.evicted': 1,
  'media.expired': 1,
  'media.fetched': 1,
  'media.marked_sensitive': 1,
  'media.refused': 1,
  'media.registered': 1,
  'media.retired': 1,
  'media.uploaded': 1,
  'notification.posted': 1,
  'notification.removed': 1,
  'pairing.approved': 1,
  'pairing.code_consumed': 1,
  'pairing.code_expired': 1,
  'pairing.code_registered': 1,
  'pairing.denied': 1,
  'pairing.requested': 1,
  'personal.forgotten': 1,
  'phone.backlog_flushed': 1,
  'phone.connected': 1,
  'phone.disconnected': 1,
  'phone.message_cancelled': 1,
  'phone.message_delivered': 1,
  'phone.message_dropped': 1,
  'phone.message_expired': 1,
  'phone.message_posted': 1,
  'phone.replies_handed': 1,
  'phone.reply_received': 1,
  'phone.subscribed': 1,
  'phone.unsubscribed': 1,
  'profile.catalog_changed': 1,
  'profile.file_written': 1,
  'profile.relay_enabled': 1,
  'ratelimit.blocked': 1,
  'ratelimit.cleared': 1,
  'relay.security_changed': 1,
  'relay.leader_changed': 1,
  'relay.started': 1,
  'relay.stopping': 1,
  'secret.set': 1,
  'secure_link.identity_changed': 1,
  'secure_link.reach_changed': 1,
  'secure_link.started': 1,
  'secure_link.unavailable': 1,
  'session.created': 1,
  'session.device_updated': 1,
  'session.expired': 1,
  'session.grant_expired': 1,
  'session.revoked': 1,
  'session.seen': 1,
  'session.shortened': 1,
  'store.checkpoint_signed': 1,
  'terminal.closed': 1,
  'terminal.detached': 1,
  'terminal.opened': 1,
  'terminal.reattached': 1,
  'terminal.recording_removed': 1,
  'terminal.recording_saved': 1,
  'trust.ended': 1,
  'trust.issued': 1,
  'trust.refused': 1,
  'trust.reuse_detected': 1,
  'trust.rotated': 1,
  'tui.started': 1,
  'tui.stopped': 1,
  'voice.session_created': 1,
  'voice.session_detached': 1,
  'voice.session_ended': 1,
  'voice.session_resumed': 1,
  'voice.settings_changed': 1,
  'voice.synthesized': 1,
  'voice.transcribed': 1,
};

/** `(data of version n) => data of version n + 1`, keyed by type and then by n. */
export type Upcaster = (data: Readonly<Record<string, unknown>>) => Record<string, unknown>;
export type Upcasters = { readonly [type: string]: { readonly [fromVersion: number]: Upcaster } };

/** v1 -> v2 of a command's outcome (issue 40): no screen evidence was taken before it. */
const noEvidence: Upcaster = (d) => ({ ...d, evidence: null });
/** v1 -> v2 where v2 only adds an optional field (CommandOrigin's `session`): a v1 record had none, and reads as it is. */
const optionalAdded: Upcaster = (d) => ({ ...d });

/**
 * The upcasters of the relay's events. A bump of EVENT_VERSIONS without one for each step fails
 * event-schema.spec.ts.
 */
export const UPCASTERS: Upcasters = {
  'bridge.command_answered': { 1: noEvidence },
  'bridge.command_failed': { 1: noEvidence },
  'bridge.command_sent': { 1: optionalAdded },
  'bridge.safety_decided': { 1: optionalAdded },
};

/** A record this relay cannot read as intended: a type it does not know, or a newer version of one it does. */
export class EventTooNewError extends Error {
  /** What the operator can do about it (docs/OPERATING.md, "Rolling back"). */
  readonly hint = 'run the relay version that wrote it, or restore the home backed up before that upgrade (docs/OPERATING.md, "Rolling back")';

  constructor(
    readonly seq: number,
    readonly type: string,
    readonly version: number,
    readonly known: number | null,
  ) {
    super(
      known === null
        ? `the event log's record seq ${seq} is a "${type}" event, a type this relay does not know: a newer relay wrote it`
        : `the event log's record seq ${seq} is a "${type}" event of version ${version}, and this relay knows that type only up to version ${known}: a newer relay wrote it`,
    );
    this.name = 'EventTooNewError';
  }
}

/** The steps from each registered version down to 1 that have no upcaster (empty when every bump has its chain). */
export function missingUpcasters(versions: Readonly<Record<string, number>>, upcasters: Upcasters): string[] {
  const missing: string[] = [];
  for (const [type, current] of Object.entries(versions))
    for (let v = 1; v < current; v++) if (typeof upcasters[type]?.[v] !== 'function') missing.push(`${type} v${v} -> v${v + 1}`);
  return missing;
}

/**
 * Reads records of any earlier version as the current shape, and refuses what this relay would misread: a
 * type it does not know or a version newer than its own (a log written by a newer relay, after a rollback).
 * Dropping such a record silently would replay to a state that relay never had.
 */
export class EventSchemas {
  constructor(
    private readonly versions: Readonly<Record<string, number>> = EVENT_VERSIONS,
    private readonly upcasters: Upcasters = UPCASTERS,
  ) {}

  /** The version a new record of `type` is written with (1 for a type outside the registry, as in tests of the store alone). */
  versionOf(type: string): number {
    return Object.hasOwn(this.versions, type) ? this.versions[type] : 1;
  }

  /** The record as the current shape of its type (the same object when it already is). Throws EventTooNewError. */
  upcast<E extends StoredEvent>(event: E): E {
    const known = Object.hasOwn(this.versions, event.type) ? this.versions[event.type] : null;
    const version = typeof event.v === 'number' ? event.v : 1;
    if (known === null || !Number.isSafeInteger(version) || version < 1 || version > known)
      throw new EventTooNewError(event.seq, event.type, version, known);
    if (version === known) return event;
    let data = event.data as Record<string, unknown>;
    for (let v = version; v < known; v++) data = this.upcasters[event.type][v](data);
    return { ...event, data, v: known };
  }
}

/** The relay's own registry: what start-up and every replay read records through. */
export const eventSchemas = new EventSchemas();
