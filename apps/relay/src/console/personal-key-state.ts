import type { ConsoleEvent } from '@svc/events';

/**
 * The Events page's word for a personal event's content, as of now: a record stays sealed for ever, but once
 * its data key is destroyed nothing can open it, so the page says `forgotten` instead of `sealed`. (The
 * console's view of an event is cached per record; the key's fate is read per answer.)
 */
export function withKeyState(e: ConsoleEvent, hasKey: ((id: string) => boolean) | null): ConsoleEvent {
  const d = e.data;
  if (!hasKey || d.content !== 'sealed' || typeof d.sealedWith !== 'string' || hasKey(d.sealedWith)) return e;
  return { ...e, data: { ...d, content: 'forgotten' } };
}
