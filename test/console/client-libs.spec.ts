import type { StoredRelayEvent } from '@svc/events';
import { toConsoleEvent } from '../../apps/relay/src/console/console-redaction';
import { matches, parseTypes } from '../../apps/relay/src/console/event-log-filter';
import { matchesFilters, type EventFilters } from '../../apps/console/src/lib/event-filter';
import { clock, duration, relative } from '../../apps/console/src/lib/format';
import { summary } from '../../apps/console/src/lib/event-summary';

/** The log page filters live events in the browser and pages through the relay: both must agree. */
describe('event filters: browser and relay agree', () => {
  const at = (m: number) => new Date(Date.UTC(2026, 2, 1, 12, m)).toISOString();
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>, actor: string, minute: number) =>
    ({ seq: ++seq, id: `e${seq}`, at: at(minute), type, actor, data, v: 1, prev: '', hash: 'f'.repeat(64) }) as unknown as StoredRelayEvent;
  const events = [
    ev('relay.started', { version: '0.1.0', pid: 1, host: '0.0.0.0', port: 8767, tls: false }, 'system', 0),
    ev('pairing.code_registered', { codeDigest: 'd'.repeat(43), source: 'mint' }, 'operator', 1),
    ev('pairing.code_consumed', { codeDigest: 'd'.repeat(43), tokenPrefix: 'AbCd1234', deviceId: 'pixel-7' }, 'public:10.0.0.2', 2),
    ev('session.created', { tokenDigest: 't'.repeat(43), tokenPrefix: 'AbCd1234', deviceId: 'pixel-7', deviceName: 'Pixel' }, 'public:10.0.0.2', 2),
    ev('phone.connected', { connId: 'c1', tokenPrefix: 'AbCd1234', deviceId: 'pixel-7', ip: '10.0.0.2', path: '/ws' }, 'device:AbCd1234', 3),
    ev('session.revoked', { tokenPrefix: 'ZzZz9999', by: 'operator', self: false, reason: 'revoked' }, 'operator', 4),
    ev('auth.failed', { ip: '10.0.0.9', kind: 'token', via: 'ws', reason: 'bad' }, 'public:10.0.0.9', 5),
    ev('ratelimit.blocked', { ip: '10.0.0.9', kind: 'token', until: at(10) }, 'public:10.0.0.9', 5),
  ];
  const filters: EventFilters[] = [
    { type: '', device: '', since: null, until: null },
    { type: 'session.', device: '', since: null, until: null },
    { type: 'session.*', device: '', since: null, until: null },
    { type: 'session', device: '', since: null, until: null },
    { type: 'session.revoked,auth.', device: '', since: null, until: null },
    { type: 'pairing.code', device: '', since: null, until: null },
    { type: '', device: 'AbCd', since: null, until: null },
    { type: '', device: 'pixel-7', since: null, until: null },
    { type: '', device: 'pixel', since: null, until: null },
    { type: '', device: '', since: Date.parse(at(2)), until: Date.parse(at(4)) },
    { type: 'phone.', device: 'AbCd1234', since: Date.parse(at(3)), until: null },
  ];

  it.each(filters.map((f) => [JSON.stringify(f), f] as const))('%s', (_name, f) => {
    for (const e of events) {
      const relay = matches(e, {
        types: parseTypes(f.type),
        device: f.device || undefined,
        since: f.since ?? undefined,
        until: f.until ?? undefined,
      });
      expect([e.type, matchesFilters(toConsoleEvent(e) as never, f)]).toEqual([e.type, relay]);
    }
  });
});

describe('format', () => {
  it('durations keep the two largest units', () => {
    expect(duration(0)).toBe('0s');
    expect(duration(59)).toBe('59s');
    expect(duration(3600 + 120)).toBe('1h 2 min');
    expect(duration(30 * 86400 + 3600)).toBe('30d 1h');
    expect(duration(400 * 86400)).toBe('1y 35d');
  });
  it('relative times and countdowns', () => {
    expect(relative(0, 3_000)).toBe('just now');
    expect(relative(0, 180_000)).toBe('3 min ago');
    expect(relative(7_200_000, 0)).toBe('in 2h');
    expect(clock(599)).toBe('9:59');
    expect(clock(3725)).toBe('1:02:05');
    expect(clock(-5)).toBe('0:00');
  });
});

describe('event summary: relay.started says how the previous run ended', () => {
  const started = (data: Record<string, unknown>) =>
    ({
      seq: 1,
      at: '2026-03-01T12:00:00.000Z',
      type: 'relay.started',
      actor: 'system',
      data: { version: '0.1.0', host: '0.0.0.0', port: 8767, tls: false, ...data },
    }) as never;
  it.each([
    [{}, 'relay 0.1.0 started on 0.0.0.0:8767'],
    [{ recovered: { segment: 's', droppedBytes: 9 } }, 'relay 0.1.0 started on 0.0.0.0:8767 after cutting a torn record'],
    [{ staleLock: { pid: 42, since: '2026-03-01T11:00:00.000Z' } }, 'relay 0.1.0 started on 0.0.0.0:8767; the previous relay did not stop'],
  ])('%j', (data, text) => {
    expect(summary(started(data))).toBe(text);
  });
});
