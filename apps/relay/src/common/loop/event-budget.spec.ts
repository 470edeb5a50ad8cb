import { DomainError } from '@svc/domain';
import type { NewEvent } from '@svc/events';
import { EventBudget } from './event-budget';

const ev = (type: string, data: object = {}): NewEvent => ({ type, data });
const command = [ev('bridge.safety_decided', { decision: 'allowed' }), ev('bridge.command_sent')];
const refusal = (fn: () => void): DomainError | null => {
  try {
    fn();
    return null;
  } catch (err) {
    return err as DomainError;
  }
};

describe('the per-device event budget', () => {
  let now = 0;
  const budget = () => new EventBudget(() => now);
  beforeEach(() => (now = 1_000_000));

  it('a device gets 300 events at once, then 5 a second; operators and the system are never counted', () => {
    const b = budget();
    for (let i = 0; i < 300; i++) b.admit([ev('notification.posted')], 'device:aaaa1111');
    const e = refusal(() => b.admit([ev('notification.posted')], 'device:aaaa1111'));
    expect(e).toMatchObject({ code: 'relay.event_budget', kind: 'rate_limited', extra: { retry_after: 1 } });
    for (let i = 0; i < 1000; i++) b.admit([ev('notification.posted')], 'operator');
    now += 1000;
    for (let i = 0; i < 5; i++) b.admit([ev('notification.posted')], 'device:aaaa1111');
    expect(refusal(() => b.admit([ev('notification.posted')], 'device:aaaa1111'))).not.toBeNull();
  });

  it('Device Control commands spend from a bucket of their own: 600 at once, then 20 a second', () => {
    const b = budget();
    for (let i = 0; i < 300; i++) b.admit([ev('notification.posted')], 'device:bbbb2222'); // the general bucket is empty
    for (let i = 0; i < 600; i++) b.admit(command, 'device:bbbb2222');
    const e = refusal(() => b.admit(command, 'device:bbbb2222'));
    expect(e?.code).toBe('relay.event_budget');
    expect(e?.message).toMatch(/Device Control commands/);
    now += 1000;
    for (let i = 0; i < 20; i++) b.admit(command, 'device:bbbb2222');
    expect(refusal(() => b.admit(command, 'device:bbbb2222'))).not.toBeNull();
  });

  it('a refused decision spends nothing from either bucket; what ends or answers is free', () => {
    const b = budget();
    for (let i = 0; i < 300; i++) b.admit([ev('notification.posted')], 'device:cccc3333');
    // Mixed: a command with one general event. The general bucket refuses; the command bucket keeps its 1200.
    for (let i = 0; i < 50; i++) expect(refusal(() => b.admit([...command, ev('notification.posted')], 'device:cccc3333'))).not.toBeNull();
    for (let i = 0; i < 600; i++) b.admit(command, 'device:cccc3333');
    for (let i = 0; i < 100; i++)
      b.admit([ev('bridge.command_answered'), ev('session.revoked'), ev('bridge.safety_decided', { decision: 'master_off' })], 'device:cccc3333');
  });

  it("a connect spends from its device's reconnect bucket, whoever decided it (a renewal is public); a pairing is not counted", () => {
    const b = new EventBudget(() => now, undefined, undefined, { burst: 2, perMinute: 6 });
    const connect = (deviceId: string, tokenPrefix = 'dddd4444') => ev('phone.connected', { deviceId, tokenPrefix });
    b.admit([connect('phone-1', 'aaaa0001')], 'device:aaaa0001');
    b.admit([ev('trust.rotated'), ev('session.created'), connect('phone-1', 'aaaa0002')], 'public:10.0.0.1');
    const e = refusal(() => b.admit([connect('phone-1', 'aaaa0003')], 'device:aaaa0003'));
    expect(e).toMatchObject({ code: 'relay.reconnect_budget', kind: 'rate_limited', extra: { retry_after: 10 } });
    // Another device, a device without an id (keyed by its session), and a pairing are not held by it.
    b.admit([connect('phone-2')], 'device:dddd4444');
    b.admit([connect('', 'eeee5555')], 'device:eeee5555');
    for (let i = 0; i < 5; i++) b.admit([ev('pairing.code_consumed'), connect('phone-1', `ffff000${i}`)], 'public:10.0.0.1');
    now += 10_000;
    // A connect spends from the reconnect bucket only: a device whose general bucket is empty still reconnects.
    for (let i = 0; i < 300; i++) b.admit([ev('notification.posted')], 'device:aaaa0004');
    b.admit([connect('phone-1', 'aaaa0004')], 'device:aaaa0004');
    expect(refusal(() => b.admit([connect('phone-1', 'aaaa0005')], 'device:aaaa0005'))).not.toBeNull();
  });
});
