import { isClipboardFormat } from '@svc/domain';
import type { ClipboardFormat } from '@svc/events';
import { Transform } from 'class-transformer';
import { Check, coded, RefuseNonObject } from '../common/http/dto-refusals';

/** `png`, `jpeg`, `gif`, `webp`; `jpg` and `image/...` (any case, trimmed) name them too. Anything else: null. */
export function clipboardFormatOf(x: unknown): ClipboardFormat | null {
  if (typeof x !== 'string') return null;
  const f = x
    .trim()
    .toLowerCase()
    .replace(/^image\//, '');
  const alias = f === 'jpg' ? 'jpeg' : f;
  return isClipboardFormat(alias) ? alias : null;
}

/**
 * `POST /clipboard/inbox {format, bytes_base64, filename_hint?}`. The base64 itself (valid, not empty, not
 * past 25 MB) is read by the service as it decodes it.
 */
@RefuseNonObject('clipboard.bad_body', 'send a JSON object {format, bytes_base64, filename_hint?}')
export class StageImageDto {
  @Transform(({ value }: { value: unknown }) => clipboardFormatOf(value) ?? value)
  @Check('clipboardFormat', (v) => clipboardFormatOf(v) !== null, coded('clipboard.bad_format', 'format must be one of png, jpeg, gif, webp'))
  format!: ClipboardFormat;

  @Check('base64String', (v) => typeof v === 'string', coded('clipboard.bad_base64', 'bytes_base64 must be a base64 string'))
  bytes_base64!: string;

  @Check(
    'filenameHint',
    (v) => v === undefined || v === null || (typeof v === 'string' && v.length <= 255),
    coded('clipboard.bad_filename_hint', 'filename_hint must be a string of at most 255 characters'),
  )
  filename_hint?: string | null;
}
