import { FileEventStore, listSegments, type StoredRelayEvent } from '@svc/events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChainMonitor } from './chain-monitor';
import { EventHistory } from './event-history';

/** A real log on disk, several small segments, written through the real store. */
async function writeLog(n: number): Promise<{ dir: string; durable: StoredRelayEvent[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-history-'));
  const durable: StoredRelayEvent[] = [];
  const store = new FileEventStore({ dir, segmentBytes: 4 * 1024, onDurable: (b) => durable.push(...(b as StoredRelayEvent[])) });
  await store.open({ fromSeq: 1, onEvent: () => undefined });
  for (let i = 1; i <= n; i++) {
    const prefix = `dev${String(i % 3).padStart(5, '0')}`;
    await store.append(
      [{ type: i % 2 ? 'session.seen' : 'phone.connected', data: { tokenPrefix: prefix, ip: '127.0.0.1', via: 'ws', n: i } }],
      new Date(Date.UTC(2026, 2, 1, 12, 0, i)).toISOString(),
      'system',
    ).durable;
  }
  await store.close();
  return { dir, durable };
}

const seqs = (es: Array<{ seq: number }>) => es.map((e) => e.seq);

describe('EventHistory over real segment files', () => {
  let dir: string;
  beforeAll(async () => {
    ({ dir } = await writeLog(120));
    expect(listSegments(dir).length).toBeGreaterThan(3);
  });

  it('pages newest first across the ring and several segments, with no gap or repeat', () => {
    const h = new EventHistory(dir, () => 120, 10);
    h.seed();
    const all: number[] = [];
    let before: number | undefined;
    for (;;) {
      const page = h.before(before, 25);
      all.push(...seqs(page.events));
      if (!page.more) break;
      before = page.events.at(-1)!.seq;
    }
    expect(all).toEqual(Array.from({ length: 120 }, (_, i) => 120 - i));
  });

  it('replays oldest first from any seq, files then ring', () => {
    const h = new EventHistory(dir, () => 120, 10);
    h.seed();
    const out: number[] = [];
    let after = 37;
    for (;;) {
      const page = h.after(after, 30);
      out.push(...seqs(page.events));
      if (!page.more) break;
      after = page.events.at(-1)!.seq;
    }
    expect(out).toEqual(Array.from({ length: 83 }, (_, i) => 38 + i));
  });

  it('never returns what is not durable yet', () => {
    const h = new EventHistory(dir, () => 100, 10);
    h.seed();
    expect(seqs(h.before(undefined, 3).events)).toEqual([100, 99, 98]);
    expect(h.after(95, 100).events.at(-1)!.seq).toBe(100);
  });

  it('filters while paging (type and device) and reports more only when more match', () => {
    const h = new EventHistory(dir, () => 120, 10);
    h.seed();
    const page = h.before(undefined, 1000, { types: ['phone.'], device: 'dev00001' });
    expect(page.more).toBe(false);
    expect(seqs(page.events)).toEqual(Array.from({ length: 120 }, (_, i) => 120 - i).filter((s) => s % 2 === 0 && s % 3 === 1));
  });

  it('keeps the ring contiguous as the bus feeds it', () => {
    const h = new EventHistory(dir, () => 123, 10);
    h.seed();
    const ev = (seq: number) => ({ seq, type: 'relay.stopping', data: { reason: 'x' } }) as unknown as StoredRelayEvent;
    h.push(ev(120)); // already held: ignored
    expect(seqs(h.newest(2))).toEqual([120, 119]);
    h.push(ev(121));
    expect(seqs(h.newest(2))).toEqual([121, 120]);
    h.push(ev(123)); // a gap: the ring restarts there rather than hold a hole
    expect(seqs(h.newest(5))).toEqual([123]);
  });
});

describe('ChainMonitor', () => {
  it('verifies incrementally, then reports the first edited record as broken until a full re-check', async () => {
    const { dir } = await writeLog(60);
    const m = new ChainMonitor(dir, () => 0);
    expect(m.check()).toMatchObject({ state: 'verified', verified_to_seq: 60 });
    expect(m.check()).toMatchObject({ state: 'verified', verified_to_seq: 60 });
    const seg = path.join(dir, listSegments(dir)[1].file);
    const text = fs.readFileSync(seg, 'utf8');
    const firstSeq = Number(/^\{"seq":(\d+)/.exec(text)![1]);
    fs.writeFileSync(seg, text.replace('"ip":"127.0.0.1"', '"ip":"127.0.0.2"'));
    expect(m.check()).toMatchObject({ state: 'verified' }); // already verified bytes are not re-read
    m.reset();
    expect(m.check()).toMatchObject({ state: 'broken', broken_at_seq: firstSeq });
  });
});
