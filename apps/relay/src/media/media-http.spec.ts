import { contentDisposition, etagOf, guessContentType, ifRangeHolds, notModified, parseRange, CONTENT_TYPE_RE } from './media-http';
import { decodeBase64, sanitizeFileName } from './media-uploads';

describe('parseRange', () => {
  it.each([
    [undefined, 100, { kind: 'full' }],
    ['bytes=0-9', 100, { kind: 'partial', start: 0, end: 9 }],
    ['bytes=90-', 100, { kind: 'partial', start: 90, end: 99 }],
    ['bytes=90-1000', 100, { kind: 'partial', start: 90, end: 99 }],
    ['bytes=-10', 100, { kind: 'partial', start: 90, end: 99 }],
    ['bytes=-1000', 100, { kind: 'partial', start: 0, end: 99 }],
    ['bytes=100-', 100, { kind: 'unsatisfiable' }],
    ['bytes=100-200', 100, { kind: 'unsatisfiable' }],
    ['bytes=-0', 100, { kind: 'unsatisfiable' }],
    ['bytes=0-', 0, { kind: 'unsatisfiable' }],
    ['bytes=5-1', 100, { kind: 'full' }],
    ['bytes=0-1,5-6', 100, { kind: 'full' }],
    ['items=0-1', 100, { kind: 'full' }],
    ['bytes=-', 100, { kind: 'full' }],
    ['bytes=99999999999999999999-', 100, { kind: 'full' }],
  ])('%s of %d bytes', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });
});

describe('Content-Disposition', () => {
  it('plain names are quoted as they are', () => {
    expect(contentDisposition('report.pdf')).toBe('inline; filename="report.pdf"');
    expect(contentDisposition(null)).toBe('inline');
  });

  it('non-ASCII names get an ASCII fallback and RFC 6266 filename*', () => {
    expect(contentDisposition('résumé.pdf')).toBe(`inline; filename="r_sum_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`);
    expect(contentDisposition('写真 1.jpg')).toBe(`inline; filename="__ 1.jpg"; filename*=UTF-8''%E5%86%99%E7%9C%9F%201.jpg`);
  });

  it('quotes, backslashes and percent escapes cannot break out of the quoted string', () => {
    const v = contentDisposition('a"b\\c%41.txt');
    expect(v).toBe(`inline; filename="a_b_c_41.txt"; filename*=UTF-8''a%22b%5Cc%2541.txt`);
  });
});

describe('validators', () => {
  const etag = etagOf('2049:1234:99', 100n, 1_700_000_000_000_000_000n);
  const mtimeMs = 1_700_000_000_000;
  it('ETag is strong and changes with size and mtime', () => {
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(etagOf('2049:1234:99', 101n, 1_700_000_000_000_000_000n)).not.toBe(etag);
  });
  it('If-None-Match beats If-Modified-Since', () => {
    expect(notModified({ 'if-none-match': etag }, etag, mtimeMs)).toBe(true);
    expect(notModified({ 'if-none-match': `"x", W/${etag}` }, etag, mtimeMs)).toBe(true);
    expect(notModified({ 'if-none-match': '"x"', 'if-modified-since': new Date(mtimeMs).toUTCString() }, etag, mtimeMs)).toBe(false);
    expect(notModified({ 'if-modified-since': new Date(mtimeMs).toUTCString() }, etag, mtimeMs)).toBe(true);
    expect(notModified({ 'if-modified-since': new Date(mtimeMs - 1000).toUTCString() }, etag, mtimeMs)).toBe(false);
    expect(notModified({}, etag, mtimeMs)).toBe(false);
  });
  it('If-Range by ETag or date', () => {
    expect(ifRangeHolds({}, etag, mtimeMs)).toBe(true);
    expect(ifRangeHolds({ 'if-range': etag }, etag, mtimeMs)).toBe(true);
    expect(ifRangeHolds({ 'if-range': '"old"' }, etag, mtimeMs)).toBe(false);
    expect(ifRangeHolds({ 'if-range': new Date(mtimeMs).toUTCString() }, etag, mtimeMs)).toBe(true);
  });
});

describe('upload helpers', () => {
  it('content types', () => {
    expect(CONTENT_TYPE_RE.test('image/png')).toBe(true);
    expect(CONTENT_TYPE_RE.test('text/plain; charset=utf-8')).toBe(true);
    expect(CONTENT_TYPE_RE.test('text/plain\r\nX-Evil: 1')).toBe(false);
    expect(CONTENT_TYPE_RE.test('image')).toBe(false);
    expect(guessContentType('a.PNG')).toBe('image/png');
    expect(guessContentType(null)).toBe('application/octet-stream');
  });
  it('file names are reduced to a display name', () => {
    expect(sanitizeFileName('../../etc/passwd')).toBe('passwd');
    expect(sanitizeFileName('C:\\Users\\a\\pic.jpg')).toBe('pic.jpg');
    expect(sanitizeFileName('a\r\nb.txt')).toBe('ab.txt');
    expect(sanitizeFileName('..')).toBeNull();
    expect(sanitizeFileName('')).toBeNull();
  });
  it('base64: both alphabets, data URLs, strict characters, cap before decoding', () => {
    expect(decodeBase64('aGk=', 10).toString()).toBe('hi');
    expect(decodeBase64('data:text/plain;base64,aGk=', 10).toString()).toBe('hi');
    expect(decodeBase64('-_8=', 10)).toEqual(Buffer.from([0xfb, 0xff]));
    expect(() => decodeBase64('aGk=!', 10)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(() => decodeBase64('A', 10)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(() => decodeBase64(Buffer.alloc(11).toString('base64'), 10)).toThrow(expect.objectContaining({ code: 'media.upload_too_large' }));
  });
});
