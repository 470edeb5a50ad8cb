import type { NewEvent, RelayEvent, StoredEvent } from '@svc/events';
import {
  pairingCodeConsumed,
  pairingCodeRegistered,
  phoneConnected,
  phoneDisconnected,
  relayStarted,
  sessionCreated,
  sessionRevoked,
} from '../../../test/support/events';
import { at, Given } from '../../../test/support/given';
import { DAY } from './durations';
import { grantDurations } from './grants';
import { ReadModels } from './read-models';

const T0 = new Date('2026-03-01T00:00:00.000Z');
const TERMS = { sessionTtlSeconds: 30 * DAY, grants: grantDurations(undefined), transportHint: null };

/** One of every spine event, in an order a real run could produce. */
function script(): Array<[NewEvent<RelayEvent>, Date]> {
  const created = (prefix: string, deviceId: string) =>
    sessionCreated({
      tokenPrefix: prefix,
      deviceId,
      deviceName: deviceId,
      devicePlatform: 'android',
      transportHint: 'lan',
      expiresAt: at(T0, 30 * DAY).toISOString(),
      grants: { chat: at(T0, 30 * DAY).toISOString(), bridge: at(T0, 3600).toISOString() },
      ip: '10.0.0.1',
    });
  return [
    [relayStarted(), T0],
    [pairingCodeRegistered({ codeDigest: 'c1', expiresAt: at(T0, 600).toISOString(), terms: TERMS }), T0],
    [pairingCodeRegistered({ codeDigest: 'c2', source: 'mint', expiresAt: at(T0, 600).toISOString(), terms: TERMS }), T0],
    [
      {
        type: 'pairing.requested',
        data: { requestId: 'r1', codeDigest: 'p1', expiresAt: at(T0, 600).toISOString(), ip: '10.0.0.2', deviceName: null },
      },
      T0,
    ],
    [
      {
        type: 'pairing.requested',
        data: { requestId: 'r2', codeDigest: 'p2', expiresAt: at(T0, 600).toISOString(), ip: '10.0.0.2', deviceName: 'x' },
      },
      T0,
    ],
    [{ type: 'pairing.approved', data: { requestId: 'r1', codeDigest: 'p1', terms: TERMS } }, at(T0, 5)],
    [{ type: 'pairing.denied', data: { requestId: 'r2', codeDigest: 'p2' } }, at(T0, 5)],
    [pairingCodeConsumed({ codeDigest: 'c1', tokenPrefix: 'aaaa1111', deviceId: 'a' }), at(T0, 10)],
    [created('aaaa1111', 'a'), at(T0, 10)],
    [pairingCodeConsumed({ codeDigest: 'p1', tokenPrefix: 'bbbb2222', deviceId: 'b' }), at(T0, 11)],
    [created('bbbb2222', 'b'), at(T0, 11)],
    [phoneConnected({ connId: 'k1', tokenPrefix: 'aaaa1111', deviceId: 'a', ip: '10.0.0.1' }), at(T0, 12)],
    [phoneConnected({ connId: 'k2', tokenPrefix: 'bbbb2222', deviceId: 'b', ip: '10.0.0.1', path: '/' }), at(T0, 12)],
    [{ type: 'session.seen', data: { tokenPrefix: 'aaaa1111', ip: '10.0.0.1', via: 'http' } }, at(T0, 100)],
    [
      {
        type: 'session.shortened',
        data: { tokenPrefix: 'aaaa1111', expiresAt: at(T0, DAY).toISOString(), grants: { chat: at(T0, DAY).toISOString() } },
      },
      at(T0, 120),
    ],
    [{ type: 'auth.failed', data: { ip: '10.0.0.9', kind: 'token', via: 'http', reason: 'r' } }, at(T0, 130)],
    [{ type: 'ratelimit.blocked', data: { ip: '10.0.0.9', kind: 'token', until: at(T0, 430).toISOString() } }, at(T0, 130)],
    [{ type: 'auth.failed', data: { ip: '10.0.0.8', kind: 'code', via: 'ws', reason: 'r' } }, at(T0, 131)],
    [{ type: 'session.grant_expired', data: { tokenPrefix: 'bbbb2222', channel: 'bridge' } }, at(T0, 3600)],
    [phoneDisconnected({ connId: 'k2', tokenPrefix: 'bbbb2222' }), at(T0, 3601)],
    [{ type: 'pairing.code_expired', data: { codeDigest: 'c2', requestId: null } }, at(T0, 3601)],
    [sessionRevoked({ tokenPrefix: 'bbbb2222', by: 'device:aaaa1111' }), at(T0, 3700)],
    [{ type: 'relay.stopping', data: { reason: 'x' } }, at(T0, 3800)],
  ];
}

function build(events: Array<[NewEvent<RelayEvent>, Date]>): Given {
  const g = new Given();
  for (const [e, t] of events) g.event(e, t);
  return g;
}

describe('ReadModels', () => {
  it('the script builds real state (so the comparisons below compare something)', () => {
    const { models } = build(script());
    expect(models.sessions.active(at(T0, 3800)).map((s) => s.tokenPrefix)).toEqual(['aaaa1111']);
    expect(models.connections.count()).toBe(1);
    expect(models.rateLimit.blockedUntil('10.0.0.9', at(T0, 200))).not.toBeNull();
    expect(models.lastSeq).toBe(script().length);
  });

  it('snapshot → JSON → restore round-trips exactly, and the restored models keep working', () => {
    const a = build(script());
    const text = JSON.stringify(a.models.snapshot());
    const b = new ReadModels();
    b.restore(JSON.parse(text) as Record<string, unknown>);
    expect(b.snapshot()).toEqual(a.models.snapshot());
    expect(b.sessions.byToken('d-aaaa1111', at(T0, 3800))?.tokenPrefix).toBe('aaaa1111');
    // Both advance alike from here.
    const next = {
      seq: 999,
      id: 'n',
      at: at(T0, 4000).toISOString(),
      type: 'session.revoked',
      actor: 'system',
      data: { tokenPrefix: 'aaaa1111', by: 'operator', self: false, reason: 'revoked' },
      v: 1,
      prev: '',
      hash: '',
    } as StoredEvent;
    a.models.apply(next);
    b.apply(next);
    expect(b.snapshot()).toEqual(a.models.snapshot());
    expect(b.sessions.byToken('d-aaaa1111', at(T0, 4000))).toBeUndefined();
  });

  it('a restored snapshot shares nothing with the one it came from', () => {
    const a = build(script());
    const snap = a.models.snapshot();
    const b = new ReadModels();
    b.restore(structuredClone(snap));
    b.apply({
      seq: 999,
      id: 'n',
      at: at(T0, 4000).toISOString(),
      type: 'session.seen',
      actor: 'system',
      data: { tokenPrefix: 'aaaa1111', ip: 'x', via: 'ws' },
      v: 1,
      prev: '',
      hash: '',
    } as StoredEvent);
    expect(a.models.snapshot()).toEqual(snap);
  });

  it('every prefix of the script, snapshotted and restored, then the rest applied, equals the whole', () => {
    const events = script();
    const whole = build(events).models.snapshot();
    for (let k = 0; k <= events.length; k++) {
      const first = build(events.slice(0, k));
      const second = new Given();
      second.models.restore(JSON.parse(JSON.stringify(first.models.snapshot())) as Record<string, unknown>);
      // keep seq numbering continuous
      for (let i = 0; i < k; i++) (second as unknown as { seq: number }).seq++;
      for (const [e, t] of events.slice(k)) second.event(e, t);
      expect({ k, m: second.models.snapshot() }).toEqual({ k, m: whole });
    }
  });

  describe('the same event twice is harmless where it should be', () => {
    const all = script();
    const cases = all.map(([e], i) => [e.type, i] as const).filter(([type]) => type !== 'auth.failed');
    it.each(cases)('%s (#%i)', (_type, i) => {
      const g = build(script().slice(0, i + 1));
      const once = g.models.snapshot();
      const [e, t] = script()[i];
      g.event(e, t);
      expect({ ...g.models.snapshot(), lastSeq: 0 }).toEqual({ ...once, lastSeq: 0 });
    });

    it('auth.failed is the exception: each one is a distinct failure and counts', () => {
      const g = new Given();
      const e: NewEvent<RelayEvent> = { type: 'auth.failed', data: { ip: 'x', kind: 'token', via: 'http', reason: 'r' } };
      g.event(e, T0);
      g.event(e, T0);
      expect(g.models.rateLimit.failuresWithin('x', 'token', T0, 60)).toBe(2);
    });
  });

  it('relay.started resets the ephemeral connections but keeps sessions, codes and blocks', () => {
    const g = build(script());
    g.event(relayStarted({ pid: 2 }), at(T0, 3900));
    expect(g.models.connections.count()).toBe(0);
    expect(g.models.sessions.count(at(T0, 3900))).toBe(1);
    expect(g.models.rateLimit.blockedUntil('10.0.0.9', at(T0, 400))).not.toBeNull();
  });

  it('events about unknown sessions or codes change nothing (a later feature’s events pass through)', () => {
    const g = build(script());
    const snap = g.models.snapshot();
    g.event({ type: 'session.shortened', data: { tokenPrefix: 'nope0000', expiresAt: null, grants: {} } }, at(T0, 4000));
    g.event({ type: 'session.grant_expired', data: { tokenPrefix: 'nope0000', channel: 'chat' } }, at(T0, 4000));
    g.event({ type: 'pairing.approved', data: { requestId: 'zz', codeDigest: 'zz', terms: TERMS } }, at(T0, 4000));
    g.event({ type: 'some.future_event', data: { x: 1 } } as unknown as NewEvent<RelayEvent>, at(T0, 4000));
    expect({ ...g.models.snapshot(), lastSeq: 0 }).toEqual({ ...snap, lastSeq: 0 });
  });
});
