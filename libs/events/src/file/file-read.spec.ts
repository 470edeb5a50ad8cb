import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { canonicalType } from '../chain-walker';
import { scanLines } from './file-read';

describe('scanLines', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-scan-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The file of these lines (and an unterminated tail). */
  function write(lines: string[], tail = ''): string {
    const file = path.join(dir, 'seg.jsonl');
    fs.writeFileSync(file, lines.map((l) => `${l}\n`).join('') + tail);
    return file;
  }
  const expected = (lines: string[]) => {
    let at = 0;
    return lines.map((line) => {
      const r = { line, at };
      at += Buffer.byteLength(line) + 1;
      return r;
    });
  };

  for (const transient of [false, true]) {
    it(`gives every line with its exact byte offset across chunk boundaries (transient: ${transient})`, () => {
      // About 1 KiB a line, 3 MiB in all: lines cross each 1 MiB chunk boundary; the first and third chunks hold
      // multi-byte text (cut line by line), the second is plain ASCII (decoded whole when transient).
      const lines: string[] = [];
      for (let i = 0; i < 3000; i++) {
        const body = i === 5 || i === 2500 ? `é漢🙂 ${'ü'.repeat(200)}` : 'a'.repeat(1000 + (i % 37));
        lines.push(`{"i":${i},"t":"${body}"}`);
      }
      const file = write(lines, '{"torn":');
      const seen: Array<{ line: string; at: number }> = [];
      const { end, tail } = scanLines(file, (line, at) => seen.push({ line, at }), undefined, transient);
      expect(seen).toEqual(expected(lines));
      expect(tail).toBe('{"torn":');
      expect(end).toBe(fs.statSync(file).size - Buffer.byteLength(tail));
    });
  }

  it('a chunk with bytes that are not UTF-8 keeps exact offsets (cut line by line)', () => {
    const file = path.join(dir, 'seg.jsonl');
    const bad = Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}\n')]);
    fs.writeFileSync(file, Buffer.concat([Buffer.from('{"a":1}\n'), bad, Buffer.from('{"b":2}\n')]));
    const offsets: number[] = [];
    scanLines(file, (_l, at) => offsets.push(at), undefined, true);
    expect(offsets).toEqual([0, 8, 8 + bad.length]);
  });
});

describe('canonicalType', () => {
  it('hands back an equal string, the same one each time', () => {
    const parsed = JSON.parse('{"type":"session.seen"}') as { type: string };
    const a = canonicalType(parsed.type);
    expect(a).toBe('session.seen');
    expect(canonicalType((JSON.parse('{"type":"session.seen"}') as { type: string }).type)).toBe(a);
    expect(canonicalType('__proto__')).toBe('__proto__');
    expect(canonicalType(7 as unknown as string)).toBe(7);
  });
});
