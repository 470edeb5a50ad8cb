import { createHash, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import * as path from 'node:path';
import { atomicWrite } from '../atomic-write';
import { hasProxyHeader, isLoopbackPeer, normalizeIp } from './net';
import type { Secrets } from '../auth/secrets';

/**
 * Who a request comes from, as the relay keys its rate limits (and records `ip` in auth events): the
 * socket's peer, unless one of the relay's own forwarders vouches for the peer behind it.
 *
 * - The Secure Link origin (in this process) marks each request it hands over with the TLS peer's address,
 *   or, for a Reach stream, the route or bootstrap credential the broker matched (the broker is the
 *   stream's TCP peer, so its address says nothing about the phone).
 * - The dashboard ingress (another process on this machine) sends `X-Svc-Proxy-Peer` with the forwarder
 *   key (`<relay dir>/forwarder.key`) in `X-Svc-Proxy-Secret`; the relay believes it only from a loopback
 *   socket with the right key, and strips both headers from every request either way.
 * - A loopback socket carrying a forwarding header without a valid vouch is some local proxy or tunnel:
 *   `127.0.0.1 via proxy`, never the operator's `127.0.0.1`.
 *
 * An address a forwarder vouches for is that address (a phone on the LAN is the same peer through Secure
 * Link and directly); a loopback one is qualified by the forwarder (`127.0.0.1 via secure-link`): a local
 * tunnel into Secure Link is not the operator, and one attacker behind it must not lock the operator out.
 */
export type Forwarder = 'secure-link' | 'ingress' | 'reach' | 'proxy';

export const PEER_HEADER = 'x-svc-proxy-peer';
export const SECRET_HEADER = 'x-svc-proxy-secret';
const HEADERS = [PEER_HEADER, SECRET_HEADER, 'x-hermes-proxy-peer', 'x-hermes-proxy-secret'];

const PEER = Symbol.for('svc.forwardedPeer');
type Marked = { [PEER]?: string };

/** The peer string for an address a forwarder vouches for: the address, or `<loopback> via <forwarder>`. */
export function vouchedPeer(address: string | undefined, via: Forwarder): string {
  const ip = normalizeIp(address);
  return isLoopbackPeer(ip) || ip === 'unknown' ? `${ip} via ${via}` : ip;
}

/** A Reach stream's peer: the credential the broker matched it with (`route:<id> via reach`), or the broker itself. */
export function reachPeer(credential: { kind: 'route' | 'bootstrap'; id: string } | null): string {
  return credential ? `${credential.kind}:${credential.id} via reach` : 'broker via reach';
}

/** The route credential id a Reach stream's peer names (`route:<id> via reach`); null for any other peer. */
export function reachRouteOf(peer: string): string | null {
  const m = /^route:([A-Za-z0-9_.-]{1,128}) via reach$/.exec(peer);
  return m ? m[1] : null;
}

/** Marks a request (or a socket whose requests inherit it) with the peer an in-process forwarder vouches for. */
export function markPeer(target: object, peer: string): void {
  (target as Marked)[PEER] = peer;
}

export function markedPeer(target: object): string | undefined {
  return (target as Marked)[PEER];
}

/** The request's peer (computed once, then kept on the request): see the module comment. */
export function peerOf(req: IncomingMessage, secrets: Secrets): string {
  const known = (req as Marked)[PEER];
  if (known !== undefined) return known;
  const claimed = header(req, PEER_HEADER);
  const secret = header(req, SECRET_HEADER);
  // Only when present: a `delete` turns the headers object into a slow dictionary for every later read.
  for (const h of HEADERS) if (req.headers[h] !== undefined) delete req.headers[h];
  const socketPeer = req.socket.remoteAddress;
  let peer: string;
  if (isLoopbackPeer(socketPeer) && claimed !== null && secret !== null && isIP(claimed) !== 0 && sameKey(secret, forwarderKey(secrets)))
    peer = vouchedPeer(claimed, 'ingress');
  else if (isLoopbackPeer(socketPeer) && hasProxyHeader(req.headers)) peer = vouchedPeer(socketPeer, 'proxy');
  else peer = normalizeIp(socketPeer);
  (req as Marked)[PEER] = peer;
  return peer;
}

function header(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined ? null : s.trim();
}

const keys = new WeakMap<Secrets, string>();

/** The key the relay's out-of-process forwarders prove themselves with: derived from the relay's secret key. */
export function forwarderKey(secrets: Secrets): string {
  let k = keys.get(secrets);
  if (k === undefined) keys.set(secrets, (k = secrets.mac('forwarder-key', 'v1')));
  return k;
}

function sameKey(given: string, expected: string): boolean {
  return timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());
}

/** Where the dashboard ingress reads the forwarder key: `<relay dir>/forwarder.key`, 0600. */
export function forwarderKeyFile(relayDir: string): string {
  return path.join(relayDir, 'forwarder.key');
}

/** Written at start (again when missing or different), for the ingress in the dashboard's process. */
export function writeForwarderKey(relayDir: string, secrets: Secrets): void {
  const file = forwarderKeyFile(relayDir);
  const key = forwarderKey(secrets);
  let current: string | null = null;
  try {
    current = fs.readFileSync(file, 'utf8').trim();
  } catch {
    current = null;
  }
  if (current !== key) atomicWrite(file, `${key}\n`);
}

/** For the ingress: the key a relay with this SVC_HOME wrote (null when there is none yet). */
export function readForwarderKey(svcHome: string): string | null {
  try {
    const k = fs.readFileSync(forwarderKeyFile(path.join(svcHome, 'relay')), 'utf8').trim();
    return k.length >= 32 ? k : null;
  } catch {
    return null;
  }
}
