import { epoch } from '@svc/domain';

/**
 * HTTP details of serving a file: byte ranges (RFC 9110 14), validators (ETag, Last-Modified),
 * Content-Disposition with RFC 6266 / RFC 8187 `filename*`.
 */

export type RangeVerdict = { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * One `bytes=` range, suffix ranges included. Several ranges, other units or malformed headers are
 * ignored (a full 200 answer is always a correct reply to a Range request).
 */
export function parseRange(header: string | undefined, size: number): RangeVerdict {
  if (header === undefined) return { kind: 'full' };
  // Split by hand, not one pattern: `\s*(\d*)\s*` lets a peer's run of spaces backtrack polynomially.
  const h = header.trim();
  const eq = h.indexOf('=');
  const dash = h.indexOf('-', eq + 1);
  if (eq < 0 || dash < 0 || h.slice(0, eq).trimEnd().toLowerCase() !== 'bytes') return { kind: 'full' };
  const m = ['', h.slice(eq + 1, dash).trim(), h.slice(dash + 1).trim()];
  if (!/^\d*$/.test(m[1]) || !/^\d*$/.test(m[2]) || (m[1] === '' && m[2] === '')) return { kind: 'full' };
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (!Number.isSafeInteger(suffix)) return { kind: 'full' };
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const last = m[2] === '' ? Number.MAX_SAFE_INTEGER : Number(m[2]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(last) || last < start) return { kind: 'full' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(last, size - 1) };
}

/** Strong validator from the file's identity, size and modification time (as nginx does, plus inode). */
export function etagOf(fileId: string, size: number | bigint, mtimeNs: bigint): string {
  const id = fileId
    .split(':')
    .map((x) => BigInt(x).toString(36))
    .join('.');
  return `"${id}-${BigInt(size).toString(36)}-${mtimeNs.toString(36)}"`;
}

/** If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2). */
export function notModified(headers: Record<string, string | string[] | undefined>, etag: string, mtimeMs: number): boolean {
  const inm = header(headers, 'if-none-match');
  if (inm !== undefined) {
    if (inm.trim() === '*') return true;
    return inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
  }
  const ims = header(headers, 'if-modified-since');
  if (ims !== undefined) {
    const t = Date.parse(ims);
    // An HTTP-date holds whole seconds: compare the file's time at that precision.
    return Number.isFinite(t) && epoch(mtimeMs) * 1000 <= t;
  }
  return false;
}

/** If-Range: the range applies only when the validator still matches; otherwise send the whole file. */
export function ifRangeHolds(headers: Record<string, string | string[] | undefined>, etag: string, mtimeMs: number): boolean {
  const ir = header(headers, 'if-range');
  if (ir === undefined) return true;
  const v = ir.trim();
  if (v.startsWith('"') || v.startsWith('W/')) return v === etag;
  const t = Date.parse(v);
  return Number.isFinite(t) && epoch(mtimeMs) * 1000 === t;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

const TOKEN_SAFE = /^[\x20-\x7e]*$/;

/**
 * `inline; filename="..."` with a quoted ASCII fallback; names with non-ASCII characters also get
 * `filename*=UTF-8''...` (RFC 6266 4.3: clients that understand it prefer it).
 */
export function contentDisposition(fileName: string | null, kind: 'inline' | 'attachment' = 'inline'): string {
  if (!fileName) return kind;
  const fallback = fileName
    .replace(/[^\x20-\x7e]/g, '_')
    .replace(/["\\]/g, '_')
    .replace(/%(?=[0-9A-Fa-f]{2})/g, '_');
  let value = `${kind}; filename="${fallback}"`;
  if (!TOKEN_SAFE.test(fileName) || fallback !== fileName) value += `; filename*=UTF-8''${encodeRfc8187(fileName)}`;
  return value;
}

/** RFC 8187 attr-char: ALPHA / DIGIT / "!#$&+-.^_`|~"; everything else percent-encoded as UTF-8. */
export function encodeRfc8187(s: string): string {
  return encodeURIComponent(s).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/** `type/subtype` with optional parameters, as a registration may give it. */
export const CONTENT_TYPE_RE =
  /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(?:\s*;\s*[A-Za-z0-9!#$&^_.+-]+=(?:[A-Za-z0-9!#$&^_.+-]+|"[^"\\\r\n]*"))*$/;

const BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  svg: 'image/svg+xml',
  bmp: 'image/bmp',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  opus: 'audio/opus',
  flac: 'audio/flac',
  pdf: 'application/pdf',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  json: 'application/json',
  html: 'text/html; charset=utf-8',
  zip: 'application/zip',
};

export function guessContentType(name: string | null): string {
  const ext = name ? /\.([A-Za-z0-9]{1,8})$/.exec(name)?.[1]?.toLowerCase() : undefined;
  return (ext && BY_EXTENSION[ext]) || 'application/octet-stream';
}
