import { keysToForget } from './forget';

const ids = [
  'aaaa1111:2026-03-01T11:00000001',
  'aaaa1111:2026-03-01T12:00000002',
  'host:2026-03-01T11:00000003',
  'host:2026-03-01T12:00000004',
  'bbbb2222:2026-03-01T12:00000005',
];
const received = new Map<string, string[]>([
  ['host:2026-03-01T11:00000003', ['aaaa1111']],
  ['bbbb2222:2026-03-01T12:00000005', ['aaaa1111', 'cccc3333']],
]);
const models = { receivers: (k: string) => received.get(k) ?? [] };

describe('keysToForget', () => {
  it("a device's own keys and the keys of what it received (host or another phone's), by prefix", () => {
    expect(keysToForget(ids, { scope: 'device', device: 'aaaa', before: null }, models)).toEqual([
      'aaaa1111:2026-03-01T11:00000001',
      'aaaa1111:2026-03-01T12:00000002',
      'bbbb2222:2026-03-01T12:00000005',
      'host:2026-03-01T11:00000003',
    ]);
    expect(keysToForget(ids, { scope: 'device', device: 'host', before: null }, models)).toEqual([
      'host:2026-03-01T11:00000003',
      'host:2026-03-01T12:00000004',
    ]);
  });

  it('with a time too: only hours that began before it', () => {
    expect(keysToForget(ids, { scope: 'device', device: 'aaaa1111', before: new Date('2026-03-01T12:00:00Z') }, models)).toEqual([
      'aaaa1111:2026-03-01T11:00000001',
      'host:2026-03-01T11:00000003',
    ]);
  });
});
