import { ExpiringIds } from './expiring-ids';

describe('ExpiringIds', () => {
  it('forgets from the oldest end only, stopping at the first id still due (no walk over the rest)', () => {
    const ids = new ExpiringIds(100);
    ids.add('a', 10);
    ids.add('b', 20);
    // Out of order on purpose: it waits behind `b`, which is what proves prune never looks past `b`.
    ids.add('c', 5);
    ids.prune(15);
    expect([...ids.entries()]).toEqual([
      ['b', 20],
      ['c', 5],
    ]);
    ids.prune(20);
    expect(ids.size).toBe(0);
  });

  it('keeps at most its cap, dropping the oldest; adding an id again makes it the newest', () => {
    const ids = new ExpiringIds(3);
    for (const id of ['a', 'b', 'c']) ids.add(id, 100);
    ids.add('a', 100);
    ids.add('d', 100);
    expect([...ids.entries()].map(([id]) => id)).toEqual(['c', 'a', 'd']);
    expect(ids.has('b')).toBe(false);
  });
});
