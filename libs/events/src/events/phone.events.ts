import type { Ev } from '../event';

/** A phone socket passed `system/auth`. Connections are ephemeral: they reset at `relay.started`. */
export type PhoneConnected = Ev<'phone.connected', { connId: string; tokenPrefix: string; deviceId: string; ip: string; path: string }>;
export type PhoneDisconnected = Ev<'phone.disconnected', { connId: string; tokenPrefix: string; code: number; reason: string }>;

export type PhoneConnectionEvent = PhoneConnected | PhoneDisconnected;
