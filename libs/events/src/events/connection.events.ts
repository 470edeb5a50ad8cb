import type { Ev } from '../event';

/**
 * What a client advertised in `system/auth` `supports` (flat, bounded: at most 32 keys of 1-64 characters,
 * values boolean, finite number or a string of at most 64 characters). Per socket: a phone may send
 * another set on its next connect.
 */
export type ClientSupports = Record<string, boolean | number | string>;

/** A phone socket passed `system/auth`. Connections are ephemeral: they reset at `relay.started`. */
export type PhoneConnected = Ev<
  'phone.connected',
  { connId: string; tokenPrefix: string; deviceId: string; ip: string; path: string; supports?: ClientSupports }
>;
export type PhoneDisconnected = Ev<'phone.disconnected', { connId: string; tokenPrefix: string; code: number; reason: string }>;

export type PhoneConnectionEvent = PhoneConnected | PhoneDisconnected;
