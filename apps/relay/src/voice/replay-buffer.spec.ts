import { ReplayBuffer, replayedJson } from './replay-buffer';

const frame = (id: number, extra = '') => JSON.stringify({ type: 't', event_id: id, pad: extra });

describe('ReplayBuffer', () => {
  it('gives what follows the client position, skipping audio it already has', () => {
    const b = new ReplayBuffer(100, 1 << 20);
    b.push(1, null, frame(1));
    b.push(2, 1, frame(2));
    b.push(3, 2, frame(3));
    b.push(4, null, frame(4));
    const r = b.since(1, 1);
    expect(r.ok && r.frames.map((f) => f.eventId)).toEqual([3, 4]);
    const all = b.since(0, 0);
    expect(all.ok && all.frames.map((f) => f.eventId)).toEqual([1, 2, 3, 4]);
    const last = b.since(3, 2);
    if (!last.ok) throw new Error('gap');
    expect(JSON.parse(replayedJson(last.frames[0]))).toEqual({
      type: 't',
      event_id: 4,
      pad: '',
      replayed: true,
    });
  });

  it('holds at most maxFrames and maxBytes, and reports a gap for a position a bound dropped', () => {
    const b = new ReplayBuffer(16, 2000);
    for (let i = 1; i <= 1000; i++) {
      b.push(i, i, frame(i, 'x'.repeat(100)));
      expect(b.size).toBeLessThanOrEqual(16);
      expect(b.bytes).toBeLessThanOrEqual(2000);
    }
    expect(b.since(10, 10)).toEqual({ ok: false, missingAfter: 10 });
    const tail = b.since(995, 995);
    expect(tail.ok && tail.frames.map((f) => f.eventId)).toEqual([996, 997, 998, 999, 1000]);
  });

  it('drops acknowledged frames without calling it a gap; an ack of a frame it does not hold (the future, a connection frame) counts for nothing', () => {
    const b = new ReplayBuffer(100, 1 << 20);
    for (let i = 1; i <= 10; i++) b.push(i, null, frame(i));
    b.ack(6);
    expect(b.size).toBe(4);
    const r = b.since(6, 0);
    expect(r.ok && r.frames.map((f) => f.eventId)).toEqual([7, 8, 9, 10]);
    b.ack(1_000_000);
    expect(b.size).toBe(4);
    // 11 went out on the socket only (voice.session.resumed): its ack vouches for nothing.
    b.push(12, null, frame(12));
    b.ack(11);
    expect(b.size).toBe(5);
    b.ack(12);
    expect(b.size).toBe(0);
  });

  it('is full past half of either bound', () => {
    const b = new ReplayBuffer(10, 1 << 20);
    for (let i = 1; i <= 4; i++) b.push(i, null, frame(i));
    expect(b.full).toBe(false);
    b.push(5, null, frame(5));
    expect(b.full).toBe(true);
  });
});
