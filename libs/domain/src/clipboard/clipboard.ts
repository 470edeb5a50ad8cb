import type { ClipboardEvent, ClipboardFormat, NewEvent } from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';

/** WIRE.md: 25 MB per image, stale after 5 minutes. */
export const CLIPBOARD_MAX_BYTES = 25 * 1024 * 1024;
export const CLIPBOARD_STALE_SECONDS = 5 * 60;
export const CLIPBOARD_FORMATS: readonly ClipboardFormat[] = ['png', 'jpeg', 'gif', 'webp'];
export const CLIPBOARD_EXTENSION: Readonly<Record<ClipboardFormat, string>> = { png: 'png', jpeg: 'jpg', gif: 'gif', webp: 'webp' };
export const CLIPBOARD_CONTENT_TYPE: Readonly<Record<ClipboardFormat, string>> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

export function isClipboardFormat(x: unknown): x is ClipboardFormat {
  return typeof x === 'string' && (CLIPBOARD_FORMATS as readonly string[]).includes(x);
}

/** True when the first bytes are the signature of `format`. */
export function magicMatches(format: ClipboardFormat, b: Uint8Array): boolean {
  const starts = (sig: number[], at = 0) => b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v);
  switch (format) {
    case 'png':
      return starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    case 'jpeg':
      return starts([0xff, 0xd8, 0xff]);
    case 'gif':
      return starts([0x47, 0x49, 0x46, 0x38, 0x37, 0x61]) || starts([0x47, 0x49, 0x46, 0x38, 0x39, 0x61]);
    case 'webp':
      return starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8);
  }
}

/**
 * The file name an image gets in the inbox: the entry id, then the hint reduced to a safe base name
 * (letters, digits, `.`, `_`, `-`; no separators, no leading dots), then the format's extension. Nothing
 * in the hint can name a directory, so the file cannot land outside the inbox.
 */
export function inboxFileName(entryId: string, format: ClipboardFormat, hint: unknown): string {
  let stem = '';
  if (typeof hint === 'string') {
    const base = hint.split(/[\\/]/).pop() ?? '';
    stem = base
      .replace(/\.[A-Za-z0-9]{1,5}$/, '')
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^[._-]+/, '')
      .replace(/\.{2,}/g, '.')
      .slice(0, 64)
      .replace(/(?<![._-])[._-]+$/, '');
  }
  return `${entryId}${stem ? `-${stem}` : ''}.${CLIPBOARD_EXTENSION[format]}`;
}

export type Stage = { entryId: string; fileName: string; format: ClipboardFormat; sizeBytes: number; sha256: string; tokenPrefix: string };

/** A new image: unread older images are superseded (a clipboard holds one thing). */
export function stageImage(m: ReadModels, cmd: Stage, now: Date): NewEvent<ClipboardEvent>[] {
  if (cmd.sizeBytes <= 0) throw new DomainError('clipboard.empty', 'invalid', 'the image is empty');
  if (cmd.sizeBytes > CLIPBOARD_MAX_BYTES)
    throw new DomainError('clipboard.too_large', 'too_large', `the image is larger than ${CLIPBOARD_MAX_BYTES} bytes (25 MB)`);
  const supersedes = m.clipboardInbox.all().map((x) => x.entryId);
  const staleAt = new Date(now.getTime() + CLIPBOARD_STALE_SECONDS * 1000).toISOString();
  return [{ type: 'clipboard.staged', data: { ...cmd, staleAt, supersedes } }];
}

/** One-shot read of the newest fresh image; 404 when the inbox has none. */
export function consumeLatest(m: ReadModels, by: string, now: Date): NewEvent<ClipboardEvent>[] {
  const entry = m.clipboardInbox.latestFresh(now);
  if (!entry) throw new DomainError('clipboard.empty_inbox', 'not_found', 'no fresh image in the paste inbox (images go stale after 5 minutes)');
  return [{ type: 'clipboard.consumed', data: { entryId: entry.entryId, by } }];
}

/** One-shot read of a given entry: 404 once it was read, superseded or went stale. */
export function consumeEntry(m: ReadModels, entryId: string, by: string, now: Date): NewEvent<ClipboardEvent>[] {
  const entry = m.clipboardInbox.get(entryId);
  if (!entry || entry.staleAt <= now.getTime()) {
    throw new DomainError('clipboard.empty_inbox', 'not_found', 'no fresh image in the paste inbox (images go stale after 5 minutes)');
  }
  return [{ type: 'clipboard.consumed', data: { entryId, by } }];
}

export function discardStale(m: ReadModels, now: Date): NewEvent<ClipboardEvent>[] {
  return m.clipboardInbox
    .all()
    .filter((x) => x.staleAt <= now.getTime())
    .map((x) => ({ type: 'clipboard.discarded', data: { entryId: x.entryId, reason: 'stale' } }));
}

export function discardEntries(m: ReadModels, ids: readonly string[], reason: 'cleared' | 'missing'): NewEvent<ClipboardEvent>[] {
  return ids.filter((id) => m.clipboardInbox.get(id)).map((entryId) => ({ type: 'clipboard.discarded', data: { entryId, reason } }));
}
