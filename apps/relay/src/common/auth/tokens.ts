/** DI tokens for values made before Nest starts. */
export const RELAY_CONFIG = Symbol('RELAY_CONFIG');
export const LOGGER = Symbol('LOGGER');
export const RUNTIME = Symbol('RUNTIME');

/** What the rest of the relay reads of a running Secure Link origin (secure-link/secure-link.server.ts). */
export interface SecureLinkView {
  readonly url: string;
  readonly pin: string;
  candidate(): Record<string, unknown>;
  services(): Record<string, unknown>;
  identityView(): Record<string, unknown>;
}

/** What the rest of the relay reads of the Reach connector (reach/connector.ts). */
export interface ReachView {
  readonly connected: boolean;
  readonly connectUrl: string;
  readonly hostId: string;
  status(): Record<string, unknown>;
  publishBootstrap(pairingId: string, token: string, expiresAt: number): Promise<void>;
  publishRoute(credentialId: string, token: string, expiresAt: number, deviceIdHash: string): Promise<void>;
  revokeRoute(credentialId: string): Promise<void>;
  /** While held (until the returned function runs), the route a Reach peer came by is not revoked; null for other peers. */
  holdRevoke(peer: string): (() => void) | null;
}

/** Facts known only once the relay listens (the real port when started on port 0). */
export type Runtime = {
  port: number;
  startedAt: Date;
  version: string;
  url: string;
  /** The Secure Link origin while it runs (null when disabled or unavailable). */
  secureLink?: SecureLinkView | null;
  /** The Reach connector while it exists; `reachStatus` says why not otherwise (disabled, unavailable). */
  reach?: ReachView | null;
  reachStatus?: Record<string, unknown>;
};
