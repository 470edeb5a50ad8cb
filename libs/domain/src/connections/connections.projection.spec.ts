import { phoneConnected, phoneDisconnected, relayStarted, sessionCreated, sessionRevoked } from '../../../../test/support/events';
import { at, given, T0 } from '../../../../test/support/given';
import { ReadModels } from '../read-models';

const ms = (d: Date) => d.getTime();

describe('connections: when a phone went offline', () => {
  it('is the time its last socket closed; nothing while any socket of it is open', () => {
    const g = given([sessionCreated(), phoneConnected(), phoneConnected({ connId: 'second' })]).state;
    expect(g.models.connections.offlineSince('aaaa1111')).toBeNull();
    g.event(phoneDisconnected({ connId: 'second' }), at(T0, 10));
    expect(g.models.connections.offlineSince('aaaa1111')).toBeNull();
    g.event(phoneDisconnected(), at(T0, 20));
    expect(g.models.connections.offlineSince('aaaa1111')).toBe(ms(at(T0, 20)));
    g.event(phoneConnected(), at(T0, 30));
    expect(g.models.connections.offlineSince('aaaa1111')).toBeNull();
  });

  it('a phone never connected has no offline time; an unknown socket closing changes nothing', () => {
    const g = given([sessionCreated(), phoneDisconnected({ connId: 'never-opened' })]).state;
    expect(g.models.connections.offlineSince('aaaa1111')).toBeNull();
  });

  it('a phone connected when the relay stopped is offline from the next start (its disconnect was never written)', () => {
    const g = given([sessionCreated(), phoneConnected()]).state;
    g.event(relayStarted(), at(T0, 600));
    expect(g.models.connections.offlineSince('aaaa1111')).toBe(ms(at(T0, 600)));
  });

  it('forgets a session that ended, and survives a snapshot and replay alike', () => {
    const g = given([
      sessionCreated(),
      sessionCreated({ tokenPrefix: 'bbbb2222' }),
      phoneConnected(),
      phoneConnected({ tokenPrefix: 'bbbb2222' }),
    ]).state;
    g.event(phoneDisconnected(), at(T0, 5));
    g.event(phoneDisconnected({ tokenPrefix: 'bbbb2222' }), at(T0, 6));
    g.event(sessionRevoked({ tokenPrefix: 'bbbb2222' }), at(T0, 7));
    expect(g.models.connections.offlineSince('bbbb2222')).toBeNull();
    const restored = new ReadModels();
    restored.restore(JSON.parse(JSON.stringify(g.models.snapshot())) as Record<string, unknown>);
    const replayed = new ReadModels();
    for (const e of g.log) replayed.apply(e);
    for (const m of [restored, replayed]) {
      expect(m.connections.offlineSince('aaaa1111')).toBe(ms(at(T0, 5)));
      expect(m.connections.snapshot()).toEqual(g.models.connections.snapshot());
    }
    // The same event twice is harmless.
    g.event(phoneDisconnected(), at(T0, 9));
    expect(g.models.connections.offlineSince('aaaa1111')).toBe(ms(at(T0, 5)));
  });

  it("keeps each phone's sockets apart, through a snapshot too: online until its own last one closes, supports from its newest", () => {
    const g = given([
      sessionCreated(),
      sessionCreated({ tokenPrefix: 'bbbb2222' }),
      phoneConnected({ connId: 'a1', supports: { phone_confirm: false } }),
      phoneConnected({ connId: 'b1', tokenPrefix: 'bbbb2222', supports: { phone_confirm: true } }),
    ]).state;
    g.event(phoneConnected({ connId: 'a2', supports: { phone_confirm: true } }), at(T0, 5));
    const restored = new ReadModels();
    restored.restore(JSON.parse(JSON.stringify(g.models.snapshot())) as Record<string, unknown>);
    // The same disconnect record applied to each model set (the live one and the restored one) alike.
    const close = (m: ReadModels, connId: string, tokenPrefix: string) =>
      m.apply({ ...g.log[g.log.length - 1], type: 'phone.disconnected', data: { connId, tokenPrefix, code: 1000, reason: '' } });
    for (const m of [g.models, restored]) {
      expect(m.connections.supportsOf('aaaa1111')).toEqual({ phone_confirm: true });
      close(m, 'b1', 'bbbb2222');
      expect(m.connections.isOnline('bbbb2222')).toBe(false);
      expect(m.connections.isOnline('aaaa1111')).toBe(true);
      close(m, 'a2', 'aaaa1111');
      expect(m.connections.isOnline('aaaa1111')).toBe(true);
      expect(m.connections.supportsOf('aaaa1111')).toEqual({ phone_confirm: false });
      close(m, 'a1', 'aaaa1111');
      expect(m.connections.isOnline('aaaa1111')).toBe(false);
      expect(m.connections.supportsOf('aaaa1111')).toEqual({});
      expect(m.connections.count()).toBe(0);
    }
  });
});
