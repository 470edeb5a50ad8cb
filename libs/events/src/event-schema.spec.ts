import { encodeRecord } from './chain';
import { GENESIS_HASH, type StoredEvent } from './event';
import { EVENT_VERSIONS, EventSchemas, EventTooNewError, eventSchemas, missingUpcasters, UPCASTERS, type Upcasters } from './event-schema';

const AT = '2026-11-28T12:00:00.000Z';

/** A record as a released relay wrote it: its bytes under the chain, parsed back as every reader parses them. */
function oldRecord(type: string, data: object, v?: number): StoredEvent {
  const { line } = encodeRecord({ seq: 7, id: 'id-7', at: AT, type, actor: 'system', data, v: v as number, prev: GENESIS_HASH });
  return JSON.parse(line) as StoredEvent;
}

describe('event schema versions', () => {
  it("every version bump of the relay's events has an upcaster for each step", () => {
    expect(missingUpcasters(EVENT_VERSIONS, UPCASTERS)).toEqual([]);
  });

  it('a bump without its upcaster is found (the check above can fail)', () => {
    const upcasters: Upcasters = { 'session.seen': { 1: (d) => d } };
    expect(missingUpcasters({ 'session.seen': 3, 'session.revoked': 2 }, upcasters)).toEqual(['session.seen v2 -> v3', 'session.revoked v1 -> v2']);
  });

  it('a registered upcaster turns an old record into the current shape, step by step; its stored bytes stay', () => {
    const schemas = new EventSchemas(
      { 'session.revoked': 3 },
      {
        'session.revoked': {
          1: (d) => ({ ...d, reason: d.self === true ? 'self' : 'other' }),
          2: ({ by, ...rest }) => ({ ...rest, revokedBy: by }),
        },
      },
    );
    const v1 = oldRecord('session.revoked', { tokenPrefix: 'abcd1234', by: 'operator', self: false }, 1);
    const before = JSON.stringify(v1);
    const now = schemas.upcast(v1);
    expect(now.v).toBe(3);
    expect(now.data).toEqual({ tokenPrefix: 'abcd1234', self: false, reason: 'other', revokedBy: 'operator' });
    expect(JSON.stringify(v1)).toBe(before);
    expect(schemas.upcast(oldRecord('session.revoked', { tokenPrefix: 'x', by: 'y', self: true }, 2)).data).toEqual({
      tokenPrefix: 'x',
      self: true,
      revokedBy: 'y',
    });
  });

  it('a record without a version reads as version 1', () => {
    const schemas = new EventSchemas({ 'session.seen': 2 }, { 'session.seen': { 1: (d) => ({ ...d, upcast: true }) } });
    const record = oldRecord('session.seen', { tokenPrefix: 'abcd1234' });
    expect('v' in record).toBe(false);
    expect(schemas.upcast(record).data).toEqual({ tokenPrefix: 'abcd1234', upcast: true });
  });

  it('a record of the current version is handed on as it is', () => {
    const record = oldRecord('relay.started', { version: '0.1.0' }, 1);
    expect(eventSchemas.upcast(record)).toBe(record);
  });

  it('refuses a newer version of a known type, and a type it does not know, naming the seq', () => {
    expect(() => eventSchemas.upcast(oldRecord('session.revoked', {}, 2))).toThrow(
      'record seq 7 is a "session.revoked" event of version 2, and this relay knows that type only up to version 1: a newer relay wrote it',
    );
    expect(() => eventSchemas.upcast(oldRecord('log.rewound', {}, 1))).toThrow(EventTooNewError);
    expect(() => eventSchemas.upcast(oldRecord('log.rewound', {}, 1))).toThrow('a type this relay does not know');
    expect(() => eventSchemas.upcast(oldRecord('session.revoked', {}, 0))).toThrow(EventTooNewError);
  });

  it('a command outcome of v1 reads as v2 with no evidence; a v1 command_sent or safety decision reads unchanged (issue 40)', () => {
    const answered = { requestId: 'r', tokenPrefix: 'abcd1234', path: '/tap', status: 200, latencyMs: 3 };
    expect(eventSchemas.upcast(oldRecord('bridge.command_answered', answered, 1))).toMatchObject({ v: 2, data: { ...answered, evidence: null } });
    const failed = { requestId: 'r', tokenPrefix: 'abcd1234', path: '/tap', reason: 'timeout', latencyMs: 3 };
    expect(eventSchemas.upcast(oldRecord('bridge.command_failed', failed)).data).toEqual({ ...failed, evidence: null });
    const sent = { requestId: 'r', tokenPrefix: 'abcd1234', method: 'POST', path: '/tap', shape: {}, via: 'mcp', client: 'c' };
    expect(eventSchemas.upcast(oldRecord('bridge.command_sent', sent, 1))).toMatchObject({ v: 2, data: sent });
    expect(eventSchemas.upcast(oldRecord('bridge.command_sent', sent, 1)).data).not.toHaveProperty('session');
  });

  it('new records are written with their type’s version', () => {
    expect(eventSchemas.versionOf('session.created')).toBe(EVENT_VERSIONS['session.created']);
    expect(eventSchemas.versionOf('test.counted')).toBe(1);
  });
});
