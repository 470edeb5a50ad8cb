import { storedEvent as ev } from '../../../test/support/stored-event';
import { eventLogFilter, isFiltered, matchesEventLog } from './event-log-filter';

describe('the console log filter', () => {
  it('types: exact, prefix with a dot or a star, a family name', () => {
    const e = ev('session.revoked', { tokenPrefix: 'abcdefgh' });
    const by = (type: string) => matchesEventLog(e, eventLogFilter({ type }));
    expect(['session.', 'session.*', 'session', 'session.revoked', 'pairing.,session.revoked', '*'].map(by)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['session.rev', 'pairing.,phone.', 'sessions'].map(by)).toEqual([false, false, false]);
  });

  it('device: token prefix in data or actor, or an exact device id; time bounds inclusive', () => {
    const device = (d: string) => eventLogFilter({ device: d });
    expect(matchesEventLog(ev('session.seen', { tokenPrefix: 'abcdefgh' }), device('abcd'))).toBe(true);
    expect(matchesEventLog(ev('phone.message', {}, 'device:abcdefgh'), device(' abcdefgh '))).toBe(true);
    expect(matchesEventLog(ev('pairing.code_consumed', { deviceId: 'pixel-1', tokenPrefix: 'zzzzzzzz' }), device('pixel-1'))).toBe(true);
    expect(matchesEventLog(ev('pairing.code_consumed', { deviceId: 'pixel-10' }), device('pixel-1'))).toBe(false);
    const t = Date.parse('2026-03-01T12:00:00.000Z');
    expect(matchesEventLog(ev('relay.started', {}), { since: t, until: t })).toBe(true);
    expect(matchesEventLog(ev('relay.started', {}), { since: t + 1 })).toBe(false);
    expect(matchesEventLog(ev('relay.started', {}), { until: t - 1 })).toBe(false);
  });

  it('blank inputs filter nothing', () => {
    expect(isFiltered(eventLogFilter({ type: ' , ', device: '  ', since: null, until: null }))).toBe(false);
    expect(isFiltered(eventLogFilter({ type: '*' }))).toBe(false);
    expect(isFiltered(eventLogFilter({ until: 0 }))).toBe(true);
  });
});
