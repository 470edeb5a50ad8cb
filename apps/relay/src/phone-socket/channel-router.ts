import { Injectable } from '@nestjs/common';
import type { Envelope } from './envelope';
import type { PhoneConnection } from './phone-connection';

/** What a feature module registers for its channel of the multiplexed socket. */
export interface ChannelHandler {
  onFrame(conn: PhoneConnection, envelope: Envelope): void | Promise<void>;
  /** The socket closed (the phone left, was revoked, or the relay is stopping). */
  onClose?(conn: PhoneConnection): void;
}

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

  all(): ChannelHandler[] {
    return [...this.handlers.values()];
  }
}
