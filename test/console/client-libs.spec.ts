import { clock, duration, relative } from '../../apps/console/src/lib/format';
import { summary } from '../../apps/console/src/lib/event-summary';

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
