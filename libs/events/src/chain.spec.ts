import { checkLine, encodeRecord, sha256 } from './chain';
import { GENESIS_HASH } from './event';

const fields = (over: Partial<Parameters<typeof encodeRecord>[0]> = {}) => ({
  seq: 7,
  id: '3b1c2d4e-0000-4000-8000-000000000000',
  at: '2026-03-01T00:00:00.000Z',
  type: 'session.created',
  actor: 'public:10.0.0.1',
  data: { tokenPrefix: 'abcd1234', nested: { prev: 'x', hash: 'y', text: 'quote " and \\ and \n newline, "prev":"z"' } },
  v: 1 as const,
  prev: GENESIS_HASH,
  ...over,
});

describe('chain encoding', () => {
  it('one line, valid JSON, hash = sha256 of the record without its hash', () => {
    const { line, hash } = encodeRecord(fields());
    expect(line.includes('\n')).toBe(false);
    const parsed = JSON.parse(line);
    expect(parsed).toEqual({ ...fields(), hash });
    const { hash: _h, ...rest } = parsed;
    expect(hash).toBe(sha256(JSON.stringify(rest)));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('checkLine reads seq, prev and hash back without a parse, even when data holds look-alike keys', () => {
    const prev = 'a'.repeat(64);
    const { line, hash } = encodeRecord(fields({ seq: 123456, prev }));
    expect(checkLine(line)).toEqual({ ok: true, seq: 123456, prev, hash });
  });

  it('any single changed character is a checksum mismatch (or malformed)', () => {
    const { line } = encodeRecord(fields());
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      const flipped = line.slice(0, i) + String.fromCharCode(c === 0x30 ? 0x31 : c ^ 0x01) + line.slice(i + 1);
      const r = checkLine(flipped);
      expect({ i, ok: r.ok }).toEqual({ i, ok: false });
    }
  });

  it.each<[string, (l: string) => string, string]>([
    ['truncated', (l) => l.slice(0, l.length - 10), 'malformed record'],
    ['empty', () => '', 'malformed record'],
    ['no hash field', (l) => l.slice(0, l.lastIndexOf(',"hash":"')) + ',"hasx":"' + l.slice(l.lastIndexOf(',"hash":"') + 9), 'missing hash'],
    ['a different hash', (l) => l.slice(0, -4) + '00"}', 'checksum mismatch'],
    ['whitespace added', (l) => l.replace('{"seq"', '{ "seq"'), 'checksum mismatch'],
  ])('%s → %s', (_label, edit, reason) => {
    const { line } = encodeRecord(fields());
    expect(checkLine(edit(line))).toEqual({ ok: false, reason });
  });

  it('records chain: each names the previous record’s hash', () => {
    const a = encodeRecord(fields({ seq: 1 }));
    const b = encodeRecord(fields({ seq: 2, prev: a.hash }));
    const cb = checkLine(b.line);
    expect(cb.ok && cb.prev).toBe(a.hash);
  });

  it('reads the seq by hand: any whole number up to 15 digits; anything else is a malformed record', () => {
    for (const seq of [1, 9, 10, 12345678901, 999_999_999_999_999]) {
      const c = checkLine(encodeRecord(fields({ seq })).line);
      expect(c.ok && c.seq).toBe(seq);
    }
    for (const seq of [-1, 1.5, 1e16, Number.NaN]) {
      expect(checkLine(encodeRecord(fields({ seq })).line)).toEqual({ ok: false, reason: 'malformed record' });
    }
    const noSeq = encodeRecord(fields({ seq: '7' as unknown as number })).line;
    expect(checkLine(noSeq)).toEqual({ ok: false, reason: 'malformed record' });
  });
});
