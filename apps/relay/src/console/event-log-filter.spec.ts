import type { StoredRelayEvent } from '@svc/events';
import { matches, parseTypes } from './event-log-filter';

const ev = (type: string, data: Record<string, unknown>, actor = 'system'): StoredRelayEvent =>
  ({
    seq: 7,
    id: 'id-7',
    at: '2026-03-01T12:00:00.000Z',
    type,
    actor,
    data,
    v: 1,
    prev: '0'.repeat(64),
    hash: 'a'.repeat(64),
  }) as unknown as StoredRelayEvent;

describe('console event filters', () => {
  it('types: exact, prefix with a dot or a star, a family name', () => {
    const e = ev('session.revoked', { tokenPrefix: 'abcdefgh' });
    expect(matches(e, { types: parseTypes('session.') })).toBe(true);
    expect(matches(e, { types: parseTypes('session.*') })).toBe(true);
    expect(matches(e, { types: parseTypes('session') })).toBe(true);
    expect(matches(e, { types: parseTypes('session.revoked') })).toBe(true);
    expect(matches(e, { types: parseTypes('session.rev') })).toBe(false);
    expect(matches(e, { types: parseTypes('pairing.,phone.') })).toBe(false);
    expect(parseTypes(' , ')).toBeUndefined();
  });

  it('device: token prefix in data or actor, or an exact device id; time bounds inclusive', () => {
    expect(matches(ev('session.seen', { tokenPrefix: 'abcdefgh' }), { device: 'abcd' })).toBe(true);
    expect(matches(ev('phone.message', {}, 'device:abcdefgh'), { device: 'abcdefgh' })).toBe(true);
    expect(matches(ev('pairing.code_consumed', { deviceId: 'pixel-1', tokenPrefix: 'zzzzzzzz' }), { device: 'pixel-1' })).toBe(true);
    expect(matches(ev('pairing.code_consumed', { deviceId: 'pixel-10' }), { device: 'pixel-1' })).toBe(false);
    const t = Date.parse('2026-03-01T12:00:00.000Z');
    expect(matches(ev('relay.started', {}), { since: t, until: t })).toBe(true);
    expect(matches(ev('relay.started', {}), { since: t + 1 })).toBe(false);
  });
});
