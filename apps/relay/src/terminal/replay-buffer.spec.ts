import { ReplayBuffer } from './replay-buffer';

describe('ReplayBuffer', () => {
  it('keeps everything under capacity', () => {
    const b = new ReplayBuffer(16);
    b.push('hello ');
    b.push('world');
    expect(b.text()).toBe('hello world');
    expect(b.bytes).toBe(11);
  });

  it('keeps only the last capacity bytes', () => {
    const b = new ReplayBuffer(8);
    b.push('abcdef');
    b.push('ghijkl');
    expect(b.text()).toBe('efghijkl');
    expect(b.bytes).toBe(8);
  });

  it('never starts inside a multi-byte character', () => {
    const b = new ReplayBuffer(7);
    b.push('€€€'); // 9 bytes: cutting 2 would land inside the first €
    expect(b.text()).toBe('€€');
    expect(b.bytes).toBe(6);
    expect(b.text()).not.toContain('\uFFFD');
    b.push('😀'); // 4 bytes
    expect(b.text()).toBe('€😀');
    expect(Buffer.byteLength(b.text())).toBeLessThanOrEqual(7);
  });

  it('drops whole old chunks under a flood and stays bounded', () => {
    const b = new ReplayBuffer(64 * 1024);
    for (let i = 0; i < 1000; i++) b.push(`${i}:`.padEnd(1000, 'x'));
    expect(b.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(b.text().endsWith('999:'.padEnd(1000, 'x'))).toBe(true);
  });
});
