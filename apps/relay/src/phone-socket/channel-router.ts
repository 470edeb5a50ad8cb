import { Injectable } from '@nestjs/common';
import type { Envelope } from './envelope';
import type { PhoneConnection } from './phone-connection';

/** What a feature module registers for its channel of the multiplexed socket. */
export interface ChannelHandler {
  /** A `DomainError` it throws (or rejects with) is answered by the hub through `onError`: handlers catch none. */
  onFrame(conn: PhoneConnection, envelope: Envelope): void | Promise<void>;
  /** The socket closed (the phone left, was revoked, or the relay is stopping). */
  onClose?(conn: PhoneConnection): void;
  /**
   * Answers a frame of this channel that failed before or inside `onFrame` (grant missing, a rule broken),
   * in the shape the channel's clients read. Without it: `<channel>.error {message, code, channel, ...}`.
   */
  onError?(conn: PhoneConnection, envelope: Envelope, error: ChannelError): void;
}

export type ChannelError = { message: string; code: string; extra: Record<string, unknown> };

@Injectable()
export class ChannelRouter {
  private readonly handlers = new Map<string, ChannelHandler>();

  register(channel: string, handler: ChannelHandler): void {
    if (this.handlers.has(channel)) throw new Error(`channel "${channel}" registered twice`);
    this.handlers.set(channel, handler);
  }

  get(channel: string): ChannelHandler | undefined {
    return this.handlers.get(channel);
  }

  /** Reports `error` about `envelope` on its own channel (issue 11: clients ignore `system/error`). */
  reportError(conn: PhoneConnection, envelope: Envelope, error: ChannelError): void {
    const handler = this.handlers.get(envelope.channel);
    if (handler?.onError) return handler.onError(conn, envelope, error);
    conn.error(error.message, error.code, { channel: envelope.channel, ...error.extra }, envelope.id);
  }

  all(): ChannelHandler[] {
    return [...this.handlers.values()];
  }
}
