import type { Projection, StoredEvent } from '@svc/events';
import { BridgeProjection } from './bridge/bridge.projection';
import { ConnectionsProjection } from './connections/connections.projection';
import { PairingProjection } from './pairing/pairing.projection';
import { RateLimitProjection } from './rate-limit/rate-limit.projection';
import { SessionsProjection } from './sessions/sessions.projection';
import { PhoneThreadsProjection } from './threads/threads.projection';
import { NotificationsProjection } from './notifications/notifications.projection';
import { ClipboardProjection } from './clipboard/clipboard.projection';
import { ImageActivityProjection } from './image-activity/image-activity.projection';
import { TerminalProjection } from './terminal/terminal.projection';
import { TerminalRecordingsProjection } from './terminal/recordings.projection';
import { MediaProjection } from './media/media.projection';
import { VoiceProjection } from './voice/voice.projection';
import { VoiceActivityProjection } from './voice/voice-activity.projection';
import { ProfilesProjection } from './profiles/profiles.projection';
import { DesktopProjection } from './desktop/desktop.projection';
import { UsageProjection } from './usage/usage.projection';
import { SecureLinkProjection } from './secure-link/secure-link.projection';
import { TrustProjection } from './trust/trust.projection';
import { PersonalDataProjection } from './personal/personal-data.projection';
import { ConsoleAccessProjection } from './console-access/console-access.projection';
import { SecretsProjection } from './secrets/secrets.projection';
import { READ_MODEL_SCHEMA } from './read-model-schema';

/**
 * Every read model of the relay. The relay keeps two instances: the decision state (holds events still
 * in the current group commit) and the durable one that routes, gateways and the console read.
 * A feature adds its projection as a field here; apply/snapshot/restore pick it up by name.
 */
export class ReadModels implements Projection<Record<string, unknown>> {
  readonly sessions = new SessionsProjection();
  readonly trust = new TrustProjection();
  readonly pairing = new PairingProjection();
  readonly rateLimit = new RateLimitProjection();
  readonly connections = new ConnectionsProjection();
  readonly phoneThreads = new PhoneThreadsProjection();
  readonly notifications = new NotificationsProjection();
  readonly clipboardInbox = new ClipboardProjection();
  readonly imageActivity = new ImageActivityProjection();
  readonly terminal = new TerminalProjection();
  readonly terminalRecordings = new TerminalRecordingsProjection();
  readonly bridge = new BridgeProjection();
  readonly media = new MediaProjection();
  readonly voice = new VoiceProjection();
  readonly voiceActivity = new VoiceActivityProjection();
  readonly profiles = new ProfilesProjection();
  readonly desktop = new DesktopProjection();
  readonly usage = new UsageProjection();
  readonly secureLink = new SecureLinkProjection();
  readonly personalData = new PersonalDataProjection();
  readonly consoleAccess = new ConsoleAccessProjection();
  readonly secrets = new SecretsProjection();
  #lastSeq = 0;

  // Found once (lazily, after every field initializer ran); a private field is not an own enumerable entry.
  #parts: Array<[string, Projection]> | null = null;

  /** The seq of the last event applied. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  private parts(): Array<[string, Projection]> {
    return (this.#parts ??= Object.entries(this).filter((entry): entry is [string, Projection] => isProjection(entry[1])));
  }

  apply(event: StoredEvent): void {
    for (const [, p] of this.parts()) p.apply(event);
    this.#lastSeq = event.seq;
  }

  snapshot(): Record<string, unknown> {
    const out: Record<string, unknown> = { schema: READ_MODEL_SCHEMA, lastSeq: this.lastSeq };
    for (const [name, p] of this.parts()) out[name] = p.snapshot();
    return out;
  }

  /**
   * Why a snapshot cannot be restored into these models, or null when it can: written under another
   * schema, or missing a projection (one added since it was written would otherwise start empty and
   * miss every event before the snapshot).
   */
  unrestorable(state: Record<string, unknown>): string | null {
    if (state.schema !== READ_MODEL_SCHEMA) return `read-model schema ${String(state.schema ?? 1)}, this relay uses ${READ_MODEL_SCHEMA}`;
    const missing = this.parts()
      .map(([name]) => name)
      .filter((name) => !(name in state));
    return missing.length > 0 ? `it has no state for ${missing.join(', ')}` : null;
  }

  restore(state: Record<string, unknown>): void {
    for (const [name, p] of this.parts()) if (name in state) p.restore(state[name]);
    this.#lastSeq = Number(state.lastSeq ?? 0);
  }
}

function isProjection(x: unknown): x is Projection {
  return typeof x === 'object' && x !== null && typeof (x as Projection).apply === 'function' && typeof (x as Projection).snapshot === 'function';
}
