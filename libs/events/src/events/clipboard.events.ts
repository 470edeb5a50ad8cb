import type { Ev } from '../event';

/** The clipboard inbox: images a phone staged for the host's paste. */
export type ClipboardFormat = 'png' | 'jpeg' | 'gif' | 'webp';
/** An image written into `<svc_home>/inbox/` (0600). A newer one supersedes (deletes) older unread ones. */
export type ClipboardStaged = Ev<
  'clipboard.staged',
  {
    entryId: string;
    fileName: string;
    format: ClipboardFormat;
    sizeBytes: number;
    sha256: string;
    tokenPrefix: string;
    staleAt: string;
    supersedes: string[];
  }
>;
/** A host tool read it (one-shot): the file is deleted. */
export type ClipboardConsumed = Ev<'clipboard.consumed', { entryId: string; by: string }>;
/** Five minutes passed, the operator cleared it, or the file vanished (a host tool read it directly). */
export type ClipboardDiscarded = Ev<'clipboard.discarded', { entryId: string; reason: 'stale' | 'cleared' | 'missing' }>;
export type ClipboardEvent = ClipboardStaged | ClipboardConsumed | ClipboardDiscarded;
