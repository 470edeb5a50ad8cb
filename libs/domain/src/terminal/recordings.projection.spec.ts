import { recordingRemoved, recordingSaved, relayStarted, terminalClosed, terminalOpened } from '../../../../test/support/events';
import { Given } from '../../../../test/support/given';
import { ReadModels } from '../read-models';

describe('terminal recordings read model', () => {
  it('lists saved recordings newest first, without the removed ones, and sums their sizes', () => {
    const m = new Given().apply([
      recordingSaved({ shellId: 'a', startedAt: '2026-03-01T12:00:00.000Z', sizeBytes: 100 }),
      recordingSaved({ shellId: 'b', startedAt: '2026-03-01T12:05:00.000Z', sizeBytes: 200 }),
      recordingSaved({ shellId: 'c', startedAt: '2026-03-01T12:05:00.000Z', sizeBytes: 300 }),
      recordingRemoved({ recordingId: 'b' }),
    ]).models;
    const r = m.terminalRecordings;
    expect(r.list().map((x) => x.recordingId)).toEqual(['c', 'a']);
    expect(r.totalBytes()).toBe(400);
    expect(r.get('b')).toBeUndefined();
    expect(r.get('a')).toMatchObject({ recordingId: 'a', tokenPrefix: 'aaaa1111', deviceId: 'dev-aaaa1111', durationMs: 2000, recovered: false });
  });

  it('the same event twice is harmless', () => {
    const e = recordingSaved({ shellId: 'a' });
    const once = new Given().apply([e]).models;
    const twice = new Given().apply([e, e]).models;
    expect(twice.terminalRecordings.list().map(({ seq: _, ...r }) => r)).toEqual(once.terminalRecordings.list().map(({ seq: _, ...r }) => r));
  });

  it('remembers whose shells were open when the previous run ended, until their recording is saved', () => {
    const g = new Given().apply([
      relayStarted(),
      terminalOpened({ shellId: 'open', tokenPrefix: 'bbbb2222' }),
      terminalOpened({ shellId: 'done' }),
      terminalClosed({ shellId: 'done' }),
      relayStarted(),
    ]);
    const m = g.models;
    expect(m.terminalRecordings.orphan('open')).toEqual({ shellId: 'open', sessionName: 'main', tokenPrefix: 'bbbb2222', deviceId: 'dev-bbbb2222' });
    expect(m.terminalRecordings.orphan('done')).toBeUndefined();
    const copy = new ReadModels();
    copy.restore(m.snapshot());
    expect(copy.terminalRecordings.orphan('open')).toBeDefined();
    g.apply([recordingSaved({ shellId: 'open', recovered: true })]);
    expect(m.terminalRecordings.orphan('open')).toBeUndefined();
    expect(m.terminalRecordings.get('open')?.recovered).toBe(true);
  });
});
