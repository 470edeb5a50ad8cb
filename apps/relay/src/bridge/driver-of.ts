import type { Driver, Principal } from '@svc/domain';
import type { AuthedRequest } from '../common/auth';
import { checkLoopback, isLoopbackPeer } from '../common/net';

/**
 * A Device Control request's driver (libs/domain bridge-authority.ts): its session, and whether it came from
 * the relay's host. That is the loopback routes' own test (loopback peer, no forwarding header, a loopback
 * Host, the relay's Origin if any) and a peer no forwarder vouched for: a request through Secure Link, the
 * dashboard ingress or a local proxy is `127.0.0.1 via ...` (forwarded-peer.ts), never the host.
 */
export function driverOf(req: AuthedRequest, caller: Principal, port: number): Driver {
  return { caller, onHost: isLoopbackPeer(req.peerIp) && checkLoopback(req.raw.socket.remoteAddress, req.headers, port).ok };
}
