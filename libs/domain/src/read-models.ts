import type { Projection, StoredEvent } from '@svc/events';
import { BridgeProjection } from './bridge/bridge.projection';
import { ConnectionsProjection } from './connections/connections.projection';
import { PairingProjection } from './pairing/pairing.projection';
import { RateLimitProjection } from './rate-limit/rate-limit.projection';
import { SessionsProjection } from './sessions/sessions.projection';
import { PhoneThreadsProjection } from './phone/phone-threads.projection';
import { NotificationsProjection } from './notifications/notifications.projection';
import { ClipboardProjection } from './clipboard/clipboard.projection';
import { ImageActivityProjection } from './image-activity/image-activity.projection';
import { TerminalProjection } from './terminal/terminal.projection';
import { MediaProjection } from './media/media.projection';

/**
 * Every read model of the relay. The relay keeps two instances: the decision state (holds events still
 * in the current group commit) and the durable one that routes, gateways and the console read.
 * A feature adds its projection as a field here; apply/snapshot/restore pick it up by name.
 */
export class ReadModels implements Projection<Record<string, unknown>> {
  readonly sessions = new SessionsProjection();
  readonly pairing = new PairingProjection();
  readonly rateLimit = new RateLimitProjection();
  readonly connections = new ConnectionsProjection();
  readonly phoneThreads = new PhoneThreadsProjection();
  readonly notifications = new NotificationsProjection();
  readonly clipboardInbox = new ClipboardProjection();
  readonly imageActivity = new ImageActivityProjection();
  readonly terminal = new TerminalProjection();
  readonly bridge = new BridgeProjection();
  readonly media = new MediaProjection();
  /** The seq of the last event applied. */
  lastSeq = 0;

  // Found once (lazily, after every field initializer ran); a private field is not an own enumerable entry.
  #parts: Array<[string, Projection]> | null = null;

  private parts(): Array<[string, Projection]> {
    return (this.#parts ??= Object.entries(this).filter((entry): entry is [string, Projection] => isProjection(entry[1])));
  }

  apply(event: StoredEvent): void {
    for (const [, p] of this.parts()) p.apply(event);
    this.lastSeq = event.seq;
  }

  snapshot(): Record<string, unknown> {
    const out: Record<string, unknown> = { lastSeq: this.lastSeq };
    for (const [name, p] of this.parts()) out[name] = p.snapshot();
    return out;
  }

  restore(state: Record<string, unknown>): void {
    for (const [name, p] of this.parts()) if (name in state) p.restore(state[name]);
    this.lastSeq = Number(state.lastSeq ?? 0);
  }
}

function isProjection(x: unknown): x is Projection {
  return typeof x === 'object' && x !== null && typeof (x as Projection).apply === 'function' && typeof (x as Projection).snapshot === 'function';
}
