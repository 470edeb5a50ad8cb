import { isIPv6 } from 'node:net';
import * as os from 'node:os';

/** The default ports (docs/OPERATING.md, Settings): the relay, the agent's API server, its dashboard, Secure Link. */
export const DEFAULT_PORT = { relay: 8767, apiServer: 8642, dashboard: 9119, secureLink: 9443 } as const;
/** Where the relay and Secure Link listen unless told otherwise: every interface. */
export const BIND_ALL = '0.0.0.0';
/** RELAY_WEBAPI_URL's default: the agent's API server on this machine. */
export const DEFAULT_WEBAPI_URL = `http://localhost:${DEFAULT_PORT.apiServer}`;
/** RELAY_SECURE_LINK_DASHBOARD_URL's default: the agent's dashboard on this machine. */
export const DEFAULT_DASHBOARD_URL = `http://127.0.0.1:${DEFAULT_PORT.dashboard}`;

const unbracket = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

/** A listen address meaning every interface (`0.0.0.0`, `::`, `[::]`; an empty host, as Node reads it). */
export function isBindAll(host: string): boolean {
  const h = unbracket(host.trim());
  return h === '0.0.0.0' || h === '::' || h === '';
}

/** This machine's loopback: `localhost`, 127.0.0.0/8, `::1` (bracketed or not). */
export function isLoopbackHost(host: string): boolean {
  const h = unbracket(host.trim()).toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The address a process on this machine connects to for a server bound to `host` (a bind-all address: 127.0.0.1). */
export function dialAddress(host: string): string {
  return isBindAll(host) ? '127.0.0.1' : unbracket(host.trim());
}

/** `dialAddress` as a URL's host: an IPv6 literal bracketed (`::1` -> `[::1]`). */
export function dialHost(host: string): string {
  return urlHost(dialAddress(host));
}

/** A host as it goes into a URL: an IPv6 literal bracketed, anything else as it is. */
export function urlHost(host: string): string {
  return isIPv6(host) ? `[${host}]` : host;
}

/** This machine's first non-internal IPv4 address, the one a phone on the LAN can dial. */
export function lanAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return null;
}

/** The host phones are told to dial for a server bound to `bindHost`: itself, or for a bind-all address the LAN address. */
export function advertisedHost(bindHost: string): string {
  return isBindAll(bindHost) ? (lanAddress() ?? '127.0.0.1') : bindHost;
}

/** An address this machine's interfaces hold now, or a loopback one: one a listener can bind. Names are not resolved. */
export function isLocalAddress(host: string): boolean {
  const h = unbracket(host.trim()).toLowerCase();
  if (isLoopbackHost(h)) return true;
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) if (a.address.toLowerCase() === h) return true;
  return false;
}
