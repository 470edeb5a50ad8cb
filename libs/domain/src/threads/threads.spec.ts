import { phoneDisconnected, relayStarted } from '../../../../test/support/events';
import { given, T0 } from '../../../../test/support/given';
import type { NewEvent, RelayEvent } from '@svc/events';
import { DomainError } from '../errors';
import { ReadModels } from '../read-models';
import { REPLIES_KEPT, THREAD_ENTRIES_KEPT } from './threads.projection';
import {
  cancelByIdOrPrefix,
  cancelIfQueued,
  cancelMessage,
  expireMessages,
  METADATA_MAX_BYTES,
  postMessage,
  PHONE_QUEUE_TTL_SECONDS,
  recordFlush,
  recordReply,
  subscribe,
  takeReplies,
  type PostMessage,
} from './threads';

const msg = (id: string, chatId = 'c'): PostMessage => ({
  messageId: id,
  chatId,
  text: `text ${id}`,
  title: null,
  surfacing: null,
  replyTo: null,
  metadata: null,
});

/** Proactive messages on, at most `queueMax` queued. */
const open = (queueMax: number) => ({ enabled: true, queueMax });

describe('phone queue rules', () => {
  it('queues every message and drops the oldest past the bound', () => {
    const m = new ReadModels();
    given(m, postMessage(m, msg('a'), open(2), T0));
    given(m, postMessage(m, msg('b'), open(2), T0));
    const out = postMessage(m, msg('c'), open(2), T0);
    expect(out.map((e) => e.type)).toEqual(['phone.message_posted', 'phone.message_dropped']);
    expect(out[1].data).toEqual({ messageId: 'a', chatId: 'c', reason: 'queue_full' });
    given(m, out);
    expect(m.phoneThreads.queued().map((q) => q.messageId)).toEqual(['b', 'c']);
    expect(m.phoneThreads.message('a')?.state).toBe('dropped');
  });

  it('a known message id decides nothing', () => {
    const m = new ReadModels();
    given(m, postMessage(m, msg('a'), open(10), T0));
    expect(postMessage(m, msg('a'), open(10), T0)).toEqual([]);
  });

  it('refuses every post while proactive messages are off, a known id included', () => {
    const m = new ReadModels();
    given(m, postMessage(m, msg('a'), open(10), T0));
    for (const id of ['a', 'b'])
      expect(() => postMessage(m, msg(id), { enabled: false, queueMax: 10 }, T0)).toThrow(
        expect.objectContaining({ code: 'phone.disabled', kind: 'forbidden' }),
      );
  });

  it('refuses blank text and metadata past its bound (UTF-8 bytes of its JSON)', () => {
    const m = new ReadModels();
    expect(() => postMessage(m, { ...msg('a'), text: ' \n\t ' }, open(10), T0)).toThrow(
      expect.objectContaining({ code: 'phone.empty_text', kind: 'invalid' }),
    );
    // {"k":"…"} is 8 bytes plus the value; "é" is two bytes.
    const fits = { k: 'é'.repeat((METADATA_MAX_BYTES - 8) / 2) };
    expect(postMessage(m, { ...msg('a'), metadata: fits }, open(10), T0)).toHaveLength(1);
    expect(() => postMessage(m, { ...msg('b'), metadata: { ...fits, x: 1 } }, open(10), T0)).toThrow(
      expect.objectContaining({ code: 'phone.metadata_too_large', kind: 'invalid' }),
    );
  });

  it('cancel by id or prefix: a known id if still queued, a prefix of 8+ naming one queued message, several refused', () => {
    const m = new ReadModels();
    for (const id of ['abcdefgh-1', 'abcdefgh-2', 'zyxwvuts-1', 'short']) given(m, postMessage(m, msg(id), open(10), T0));
    expect(() => cancelByIdOrPrefix(m, 'abcdefgh', 'operator')).toThrow(
      expect.objectContaining({ code: 'phone.ambiguous_id', kind: 'conflict', extra: { matches: 2 } }),
    );
    expect(cancelByIdOrPrefix(m, 'zyxwvut', 'operator')).toEqual([]);
    expect(cancelByIdOrPrefix(m, 'zyxwvuts', 'operator')).toEqual([
      { type: 'phone.message_cancelled', data: { messageId: 'zyxwvuts-1', chatId: 'c', by: 'operator' } },
    ]);
    given(m, cancelByIdOrPrefix(m, 'short', 'operator'));
    expect(m.phoneThreads.message('short')?.state).toBe('cancelled');
    // No longer queued, or unknown: nothing to cancel, no refusal.
    expect(cancelByIdOrPrefix(m, 'short', 'operator')).toEqual([]);
    expect(cancelIfQueued(m, 'short', 'operator')).toEqual([]);
    expect(cancelIfQueued(m, 'nobody', 'operator')).toEqual([]);
  });

  it('expires exactly at 24 hours', () => {
    const m = new ReadModels();
    given(m, postMessage(m, msg('a'), open(10), T0));
    const at = (s: number) => new Date(T0.getTime() + s * 1000);
    expect(expireMessages(m, at(PHONE_QUEUE_TTL_SECONDS - 1))).toEqual([]);
    expect(expireMessages(m, at(PHONE_QUEUE_TTL_SECONDS)).map((e) => e.type)).toEqual(['phone.message_expired']);
  });

  it('cancel: 404 unknown, 409 when no longer queued', () => {
    const m = new ReadModels();
    given(m, postMessage(m, msg('a'), open(10), T0));
    expect(() => cancelMessage(m, 'zz', 'operator')).toThrow(expect.objectContaining({ code: 'phone.message_not_found', kind: 'not_found' }));
    given(m, cancelMessage(m, 'a', 'operator'));
    let err: unknown;
    try {
      cancelMessage(m, 'a', 'operator');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ kind: 'conflict', extra: { state: 'cancelled' } });
  });

  it('an interrupted flush leaves the rest queued, in order', () => {
    const m = new ReadModels();
    for (const id of ['a', 'b', 'c']) given(m, postMessage(m, msg(id), open(10), T0));
    const to = { connId: 'conn1', tokenPrefix: 'abcd1234' };
    const out = recordFlush(m, [{ messageId: 'a', queued: true }], to, true);
    expect(out[out.length - 1].data).toEqual({ ...to, count: 1, remaining: 2, interrupted: true });
    given(m, out);
    expect(m.phoneThreads.queued().map((q) => q.messageId)).toEqual(['b', 'c']);
  });

  it('the latest subscriber wins and names the one it replaced', () => {
    const m = new ReadModels();
    given(m, subscribe(m, { connId: 'x', tokenPrefix: 'p1', deviceName: 'A', sharePhoneStatus: true }));
    const out = subscribe(m, { connId: 'y', tokenPrefix: 'p2', deviceName: 'B', sharePhoneStatus: true });
    expect(out[0].data).toMatchObject({ connId: 'y', replaced: 'x' });
  });
});

describe('phone threads projection', () => {
  it('the same event twice gives the same read model', () => {
    const once = new ReadModels();
    const twice = new ReadModels();
    const events = [
      ...postMessage(once, msg('a'), open(10), T0),
      { type: 'phone.reply_received', data: { replyId: 'r', chatId: 'c', text: 'hi', replyTo: null, tokenPrefix: 'p', deviceName: 'P', via: 'ws' } },
    ] as NewEvent<RelayEvent>[];
    const stored = given(once, events);
    for (const e of stored) {
      twice.apply(e);
      twice.apply(e);
    }
    expect(twice.snapshot()).toEqual(once.snapshot());
  });

  it('the queue survives relay.started; the subscriber does not; a disconnect clears it too', () => {
    const m = new ReadModels();
    given(m, postMessage(m, msg('a'), open(10), T0));
    given(m, subscribe(m, { connId: 'x', tokenPrefix: 'p1', deviceName: 'A', sharePhoneStatus: true }));
    given(m, [relayStarted()]);
    expect(m.phoneThreads.subscriber()).toBeNull();
    expect(m.phoneThreads.queuedCount()).toBe(1);
    given(m, subscribe(m, { connId: 'y', tokenPrefix: 'p1', deviceName: 'A', sharePhoneStatus: true }));
    given(m, [phoneDisconnected({ connId: 'y', tokenPrefix: 'p1' })]);
    expect(m.phoneThreads.subscriber()).toBeNull();
  });

  it('keeps the latest 100 entries per thread; a queued message outlives its entry, then is forgotten', () => {
    const m = new ReadModels();
    given(m, postMessage(m, msg('old'), open(10), T0));
    const replies = Array.from({ length: THREAD_ENTRIES_KEPT }, (_, i) => ({
      type: 'phone.reply_received',
      data: { replyId: `r${i}`, chatId: 'c', text: 't', replyTo: null, tokenPrefix: 'p', deviceName: 'P', via: 'ws' },
    })) as NewEvent<RelayEvent>[];
    given(m, replies);
    expect(m.phoneThreads.threadById('c')!.entries).toHaveLength(THREAD_ENTRIES_KEPT);
    expect(m.phoneThreads.message('old')?.state).toBe('queued');
    given(m, recordFlush(m, [{ messageId: 'old', queued: true }], { connId: 'x', tokenPrefix: 'p' }, false));
    expect(m.phoneThreads.message('old')).toBeUndefined();
    expect(m.phoneThreads.queuedCount()).toBe(0);
  });

  it('snapshot and restore round-trip', () => {
    const m = new ReadModels();
    given(m, postMessage(m, msg('a'), open(10), T0));
    given(m, postMessage(m, msg('b', 'other'), open(10), T0));
    const copy = new ReadModels();
    copy.restore(structuredClone(m.snapshot()));
    expect(copy.snapshot()).toEqual(m.snapshot());
    expect(copy.phoneThreads.queued().map((q) => q.messageId)).toEqual(['a', 'b']);
  });
});

describe('the host takes replies once', () => {
  const reply = (id: string, chatId = 'c') => ({
    replyId: id,
    chatId,
    text: `reply ${id}`,
    replyTo: null,
    tokenPrefix: 'tok0ABCD',
    deviceName: 'Pixel',
    via: 'ws' as const,
    clientMsgId: null,
  });

  it('hands what was not handed, oldest first, up to the limit; nothing left decides nothing', () => {
    const m = new ReadModels();
    for (const id of ['r1', 'r2', 'r3']) given(m, recordReply(m, reply(id)));
    const first = takeReplies(m, 2, 'operator');
    expect(first).toEqual([{ type: 'phone.replies_handed', data: { replyIds: ['r1', 'r2'], by: 'operator' } }]);
    given(m, first);
    expect(takeReplies(m, 10, 'operator')[0].data).toEqual({ replyIds: ['r3'], by: 'operator' });
    given(m, takeReplies(m, 10, 'operator'));
    expect(takeReplies(m, 10, 'operator')).toEqual([]);
    // The cursor view still has them all.
    expect(m.phoneThreads.repliesAfter(0).map((r) => r.replyId)).toEqual(['r1', 'r2', 'r3']);
  });

  it('takes one chat when asked, leaving the others', () => {
    const m = new ReadModels();
    given(m, recordReply(m, reply('a1', 'a')));
    given(m, recordReply(m, reply('b1', 'b')));
    given(m, takeReplies(m, 10, 'operator', 'b'));
    expect(m.phoneThreads.unhanded().map((r) => r.replyId)).toEqual(['a1']);
  });

  it('survives a snapshot and restore; a snapshot from before the field counts as not handed', () => {
    const m = new ReadModels();
    given(m, recordReply(m, reply('x')));
    given(m, recordReply(m, reply('y')));
    given(m, takeReplies(m, 1, 'operator'));
    const snap = m.phoneThreads.snapshot();
    const back = new ReadModels();
    back.phoneThreads.restore(snap);
    expect(back.phoneThreads.unhanded().map((r) => r.replyId)).toEqual(['y']);
    const old = { ...snap, replies: snap.replies.map(({ handed: _h, ...r }) => r) } as unknown as typeof snap;
    back.phoneThreads.restore(old);
    expect(back.phoneThreads.unhanded().map((r) => r.replyId)).toEqual(['x', 'y']);
  });

  it('a blank reply is refused', () => {
    expect(() => recordReply(new ReadModels(), { ...reply('r'), text: '  ' })).toThrow(expect.objectContaining({ code: 'phone.empty_text' }));
  });

  it('past the bound, handed replies leave before untaken ones', () => {
    const m = new ReadModels();
    given(m, recordReply(m, reply('old-untaken')));
    for (let i = 0; i < REPLIES_KEPT; i++) given(m, recordReply(m, reply(`r${i}`)));
    // Nothing handed yet: the oldest untaken goes.
    expect(m.phoneThreads.reply('old-untaken')).toBeUndefined();
    given(m, takeReplies(m, 1, 'operator'));
    given(m, recordReply(m, reply('newest')));
    expect(m.phoneThreads.reply('r0')).toBeUndefined();
    expect(m.phoneThreads.reply('r1')).toBeDefined();
    expect(m.phoneThreads.unhanded()).toHaveLength(REPLIES_KEPT);
  });
});
