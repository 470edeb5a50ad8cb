import { lastJson, sameJson } from './health.route';

describe('/health body text reuse', () => {
  it('sameJson: equal exactly when the JSON texts are equal (plain values)', () => {
    const pairs: Array<[unknown, unknown]> = [
      [
        { a: 1, b: [1, 'x', null, { c: true }] },
        { a: 1, b: [1, 'x', null, { c: true }] },
      ],
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
      [{ a: 1 }, { a: 1, b: 2 }],
      [{ a: [1, 2] }, { a: [1, 2, 3] }],
      [{ a: [1] }, { a: { 0: 1 } }],
      [{ a: 80960638976 }, { a: 80960638977 }],
      [{ a: null }, { a: {} }],
      [{ a: 'x' }, { a: 'y' }],
      [[], {}],
    ];
    for (const [a, b] of pairs) expect(sameJson(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b));
  });

  it('sameJson: a Date or other class instance is never taken as unchanged', () => {
    expect(sameJson({ t: new Date(1) }, { t: new Date(2) })).toBe(false);
    expect(sameJson({ t: new Date(1) }, { t: new Date(1) })).toBe(false);
    expect(sameJson(new Map(), new Map())).toBe(false);
  });

  it('lastJson: hands back the same text while the value is unchanged, a new one when a leaf changes', () => {
    const json = lastJson<{ clients: number; disk: { free: number } }>();
    const first = json({ clients: 0, disk: { free: 5 } });
    expect(first).toBe('{"clients":0,"disk":{"free":5}}');
    expect(json({ clients: 0, disk: { free: 5 } })).toBe(first);
    expect(json({ clients: 1, disk: { free: 5 } })).toBe('{"clients":1,"disk":{"free":5}}');
    expect(json({ clients: 1, disk: { free: 4 } })).toBe('{"clients":1,"disk":{"free":4}}');
  });
});
