import type { Driver, Principal } from '@svc/domain';
import type { AuthedRequest } from '../common/auth/auth';
import { checkLoopback, isLoopbackPeer } from '../common/http/net';
import { OPERATOR_KEY_HEADER, type OperatorKey } from '../common/auth/operator-key';
import type { LoopbackTrust, RelayConfig } from '../common/config/relay-config';
import type { Runtime } from '../common/auth/tokens';

/** What makes a request the relay's host: the port (for the loopback test) and RELAY_LOOPBACK_TRUST with the key. */
export type HostTrust = { port: () => number; loopbackTrust: LoopbackTrust; operatorKey: OperatorKey };

/** The host trust of a relay: its live port, RELAY_LOOPBACK_TRUST and its operator key. */
export function hostTrustOf(runtime: Runtime, config: Pick<RelayConfig, 'loopbackTrust'>, operatorKey: OperatorKey): HostTrust {
  return { port: () => runtime.port, loopbackTrust: config.loopbackTrust, operatorKey };
}

/**
 * A Device Control request's driver (libs/domain bridge-authority.ts): its session, and whether it came from
 * the relay's host. That is the loopback routes' own test (loopback peer, no forwarding header, one loopback
 * Host, an origin-form target, nothing of another site) and a peer no forwarder vouched for: a request
 * through Secure Link, the dashboard ingress or a local proxy is `127.0.0.1 via ...` (forwarded-peer.ts),
 * never the host. With RELAY_LOOPBACK_TRUST=key the host must also show the operator key: a same-host proxy
 * without forwarding headers makes the world loopback, and then only a credential says "the host".
 */
export function driverOf(req: AuthedRequest, caller: Principal, host: HostTrust): Driver {
  const loopback = isLoopbackPeer(req.peerIp) && checkLoopback(req.raw, host.port()).ok;
  return { caller, onHost: loopback && (host.loopbackTrust === 'loopback' || carriesKey(req, host.operatorKey)) };
}

function carriesKey(req: AuthedRequest, key: OperatorKey): boolean {
  const given = req.headers[OPERATOR_KEY_HEADER];
  return typeof given === 'string' && given.trim() !== '' && key.matches(given.trim());
}
