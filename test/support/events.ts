import { DAY, grantDurations } from '@svc/domain';
import type {
  NewEvent,
  PairingCodeConsumed,
  PairingCodeRegistered,
  PhoneConnected,
  PhoneDisconnected,
  RelayStarted,
  SessionCreated,
  SessionRevoked,
} from '@svc/events';
import { at, T0 } from './given';

/**
 * Events the unit tests hand to `given` / `Given`, built with defaults so a test names only what it is
 * about. One phone unless told otherwise: token prefix `aaaa1111`, its device `dev-<prefix>`, its socket
 * `conn-<prefix>` (each derived from the prefix a test picks). Times default to T0.
 */

export const relayStarted = (over: Partial<RelayStarted['data']> = {}): NewEvent<RelayStarted> => ({
  type: 'relay.started',
  data: { version: '0', pid: 1, host: '127.0.0.1', port: 8767, tls: false, ...over },
});

/** A usable code, 10 minutes from T0, with the default terms of a 30-day pairing. */
export const pairingCodeRegistered = (over: Partial<PairingCodeRegistered['data']> = {}): NewEvent<PairingCodeRegistered> => ({
  type: 'pairing.code_registered',
  data: {
    codeDigest: 'c1',
    source: 'register',
    expiresAt: at(T0, 600).toISOString(),
    terms: { sessionTtlSeconds: 30 * DAY, grants: grantDurations(undefined), transportHint: null },
    ...over,
  },
});

export const pairingCodeConsumed = (over: Partial<PairingCodeConsumed['data']> = {}): NewEvent<PairingCodeConsumed> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return { type: 'pairing.code_consumed', data: { codeDigest: 'c1', tokenPrefix, deviceId: `dev-${tokenPrefix}`, ...over } };
};

/** A paired session that never expires, with the `chat` grant only (name the grants a test needs). */
export const sessionCreated = (over: Partial<SessionCreated['data']> = {}): NewEvent<SessionCreated> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return {
    type: 'session.created',
    data: {
      tokenDigest: `d-${tokenPrefix}`,
      tokenPrefix,
      deviceId: `dev-${tokenPrefix}`,
      deviceName: 'Phone',
      deviceModel: null,
      devicePlatform: null,
      transportHint: null,
      expiresAt: null,
      grants: { chat: null },
      ip: '127.0.0.1',
      ...over,
    },
  };
};

export const sessionRevoked = (over: Partial<SessionRevoked['data']> = {}): NewEvent<SessionRevoked> => ({
  type: 'session.revoked',
  data: { tokenPrefix: 'aaaa1111', by: 'operator', self: false, reason: 'revoked', ...over },
});

export const phoneConnected = (over: Partial<PhoneConnected['data']> = {}): NewEvent<PhoneConnected> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return {
    type: 'phone.connected',
    data: { connId: `conn-${tokenPrefix}`, tokenPrefix, deviceId: `dev-${tokenPrefix}`, ip: '127.0.0.1', path: '/ws', ...over },
  };
};

export const phoneDisconnected = (over: Partial<PhoneDisconnected['data']> = {}): NewEvent<PhoneDisconnected> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return { type: 'phone.disconnected', data: { connId: `conn-${tokenPrefix}`, tokenPrefix, code: 1000, reason: '', ...over } };
};
