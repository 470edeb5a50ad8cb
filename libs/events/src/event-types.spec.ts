import { cpuMs } from '../../../test/support/timing';
import { closeEventTypes, EVENT_FAMILIES, EVENT_TYPES, namesAnEventType } from './event-types';

describe('the known event types and the names close to a wrong one', () => {
  it('a spec names a type when it is one, a family, or a family with a dot or star (parsed)', () => {
    for (const ok of ['session', 'session.', 'session.revoked', 'secure_link']) expect([ok, namesAnEventType(ok)]).toEqual([ok, true]);
    for (const bad of ['sess', 'session.rev', 'nosuch', 'session.revoked.x']) expect([bad, namesAnEventType(bad)]).toEqual([bad, false]);
    expect(EVENT_FAMILIES).toContain('secure_link');
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPES.length);
  });

  it('offers prefixes, actions and near spellings, best first', () => {
    expect(closeEventTypes('sesion')[0]).toBe('session');
    expect(closeEventTypes('session.revokd')[0]).toBe('session.revoked');
    expect(closeEventTypes('revoked')[0]).toBe('session.revoked');
    expect(closeEventTypes('pair')[0]).toBe('pairing');
    expect(closeEventTypes('Voice.Transcribd')).toContain('voice.transcribed');
    expect(closeEventTypes('zzzzzz')).toEqual([]);
    expect(closeEventTypes('s', 3)).toHaveLength(3);
  });

  it('stays linear on hostile input: a long name is not compared at all, a near-long one quickly', () => {
    expect(closeEventTypes('a'.repeat(100_000))).toEqual([]);
    // CPU time, not wall time (a busy machine stretches the latter): 28-46 ms quiet; without the distance's
    // early exits (length gap, row minimum over the bound) these 200 calls cost 25-30 s.
    const cpu = cpuMs(() => {
      for (let i = 0; i < 200; i++) closeEventTypes(`${'x'.repeat(60)}${i}`);
    });
    expect(cpu).toBeLessThan(2000);
  });
});
