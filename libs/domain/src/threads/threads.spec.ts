import { messagePosted, phoneDisconnected, phoneSubscribed, relayStarted, repliesHanded, replyReceived } from '../../../../test/support/events';
import { at, given, Given, T0, type Decision } from '../../../../test/support/given';
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
  type PostPolicy,
  type Reply,
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
const open = (queueMax: number): PostPolicy => ({ enabled: true, queueMax });

/** Messages posted at T0 leave the queue 24 hours later. */
const EXPIRES = at(T0, PHONE_QUEUE_TTL_SECONDS).toISOString();

const post =
  (cmd: PostMessage, policy = open(10)): Decision =>
  (m, now) =>
    postMessage(m, cmd, policy, now);
const cancelled = (messageId: string) => ({ type: 'phone.message_cancelled' as const, data: { messageId, chatId: 'c', by: 'operator' } });
const queuedIds = (m: ReadModels) => m.phoneThreads.queued().map((q) => q.messageId);

describe('phone queue rules', () => {
  it('queues every message and drops the oldest past the bound', () => {
    const g = given([messagePosted({ messageId: 'a' }), messagePosted({ messageId: 'b' })])
      .when(post(msg('c'), open(2)))
      .then([
        { type: 'phone.message_posted', data: { ...msg('c'), expiresAt: EXPIRES } },
        { type: 'phone.message_dropped', data: { messageId: 'a', chatId: 'c', reason: 'queue_full' } },
      ]);
    expect(queuedIds(g.models)).toEqual(['b', 'c']);
    expect(g.models.phoneThreads.message('a')?.state).toBe('dropped');
  });

  it('a known message id decides nothing', () => {
    given([messagePosted({ messageId: 'a' })])
      .when(post(msg('a')))
      .then([]);
  });

  it('refuses every post while proactive messages are off, a known id included', () => {
    const g = given([messagePosted({ messageId: 'a' })]);
    for (const id of ['a', 'b']) g.when(post(msg(id), { enabled: false, queueMax: 10 })).thenThrows('phone.disabled', 'forbidden');
  });

  it('refuses blank text and metadata past its bound (UTF-8 bytes of its JSON)', () => {
    given()
      .when(post({ ...msg('a'), text: ' \n\t ' }))
      .thenThrows('phone.empty_text', 'invalid');
    // {"k":"…"} is 8 bytes plus the value; "é" is two bytes.
    const fits = { k: 'é'.repeat((METADATA_MAX_BYTES - 8) / 2) };
    given()
      .when(post({ ...msg('a'), metadata: fits }))
      .then([{ type: 'phone.message_posted', data: { ...msg('a'), metadata: fits, expiresAt: EXPIRES } }]);
    given()
      .when(post({ ...msg('b'), metadata: { ...fits, x: 1 } }))
      .thenThrows('phone.metadata_too_large', 'invalid');
  });

  it('cancel by id or prefix: a known id if still queued, a prefix of 8+ naming one queued message, several refused', () => {
    const g = given(['abcdefgh-1', 'abcdefgh-2', 'zyxwvuts-1', 'short'].map((messageId) => messagePosted({ messageId })));
    const byIdOrPrefix =
      (idOrPrefix: string): Decision =>
      (m) =>
        cancelByIdOrPrefix(m, idOrPrefix, 'operator');
    expect(g.when(byIdOrPrefix('abcdefgh')).thenThrows('phone.ambiguous_id', 'conflict').extra).toEqual({ matches: 2 });
    g.when(byIdOrPrefix('zyxwvut')).then([]);
    g.when(byIdOrPrefix('zyxwvuts')).then([cancelled('zyxwvuts-1')]);
    g.when(byIdOrPrefix('short')).then([cancelled('short')]);
    expect(g.models.phoneThreads.message('short')?.state).toBe('cancelled');
    // No longer queued, or unknown: nothing to cancel, no refusal.
    g.when(byIdOrPrefix('short')).then([]);
    g.when((m) => cancelIfQueued(m, 'short', 'operator')).then([]);
    g.when((m) => cancelIfQueued(m, 'nobody', 'operator')).then([]);
  });

  it('expires exactly at 24 hours', () => {
    const posted = given()
      .when(post(msg('a')))
      .then([{ type: 'phone.message_posted', data: { ...msg('a'), expiresAt: EXPIRES } }]);
    const g = given(posted);
    g.when(expireMessages, at(T0, PHONE_QUEUE_TTL_SECONDS - 1)).then([]);
    g.when(expireMessages, at(T0, PHONE_QUEUE_TTL_SECONDS)).then([{ type: 'phone.message_expired', data: { messageId: 'a', chatId: 'c' } }]);
  });

  it('cancel: 404 unknown, 409 when no longer queued', () => {
    const g = given([messagePosted({ messageId: 'a' })]);
    const cancel =
      (messageId: string): Decision =>
      (m) =>
        cancelMessage(m, messageId, 'operator');
    g.when(cancel('zz')).thenThrows('phone.message_not_found', 'not_found');
    g.when(cancel('a')).then([cancelled('a')]);
    expect(g.when(cancel('a')).thenThrows('phone.not_queued', 'conflict').extra).toEqual({ state: 'cancelled' });
  });

  it('an interrupted flush leaves the rest queued, in order', () => {
    const to = { connId: 'conn1', tokenPrefix: 'abcd1234' };
    const g = given(['a', 'b', 'c'].map((messageId) => messagePosted({ messageId })))
      .when((m) => recordFlush(m, [{ messageId: 'a', queued: true }], to, true))
      .then([
        { type: 'phone.message_delivered', data: { messageId: 'a', chatId: 'c', ...to, queued: true } },
        { type: 'phone.backlog_flushed', data: { ...to, count: 1, remaining: 2, interrupted: true } },
      ]);
    expect(queuedIds(g.models)).toEqual(['b', 'c']);
  });

  it('the latest subscriber wins and names the one it replaced', () => {
    const cmd = { connId: 'y', tokenPrefix: 'p2', deviceName: 'B', sharePhoneStatus: true };
    given([phoneSubscribed({ connId: 'x', tokenPrefix: 'p1', deviceName: 'A' })])
      .when((m) => subscribe(m, cmd))
      .then([{ type: 'phone.subscribed', data: { ...cmd, replaced: 'x' } }]);
  });
});

describe('phone threads projection', () => {
  it('the same event twice gives the same read model', () => {
    const once = new Given().apply([messagePosted({ messageId: 'a' }), replyReceived({ replyId: 'r', text: 'hi' })]);
    const twice = new ReadModels();
    for (const e of once.log) {
      twice.apply(e);
      twice.apply(e);
    }
    expect(twice.snapshot()).toEqual(once.models.snapshot());
  });

  it('the queue survives relay.started; the subscriber does not; a disconnect clears it too', () => {
    const g = new Given().apply([messagePosted({ messageId: 'a' }), phoneSubscribed({ connId: 'x', tokenPrefix: 'p1' }), relayStarted()]);
    expect(g.models.phoneThreads.subscriber()).toBeNull();
    expect(g.models.phoneThreads.queuedCount()).toBe(1);
    g.apply([phoneSubscribed({ connId: 'y', tokenPrefix: 'p1' }), phoneDisconnected({ connId: 'y', tokenPrefix: 'p1' })]);
    expect(g.models.phoneThreads.subscriber()).toBeNull();
  });

  it('keeps the latest 100 entries per thread; a queued message outlives its entry, then is forgotten', () => {
    const replies = Array.from({ length: THREAD_ENTRIES_KEPT }, (_, i) => replyReceived({ replyId: `r${i}` }));
    const g = new Given().apply([messagePosted({ messageId: 'old' }), ...replies]);
    expect(g.models.phoneThreads.threadById('c')!.entries).toHaveLength(THREAD_ENTRIES_KEPT);
    expect(g.models.phoneThreads.message('old')?.state).toBe('queued');
    const to = { connId: 'x', tokenPrefix: 'p' };
    given(g)
      .when((m) => recordFlush(m, [{ messageId: 'old', queued: true }], to, false))
      .then([
        { type: 'phone.message_delivered', data: { messageId: 'old', chatId: 'c', ...to, queued: true } },
        { type: 'phone.backlog_flushed', data: { ...to, count: 1, remaining: 0, interrupted: false } },
      ]);
    expect(g.models.phoneThreads.message('old')).toBeUndefined();
    expect(g.models.phoneThreads.queuedCount()).toBe(0);
  });

  it('snapshot and restore round-trip', () => {
    const g = new Given().apply([messagePosted({ messageId: 'a' }), messagePosted({ messageId: 'b', chatId: 'other' })]);
    const copy = new ReadModels();
    copy.restore(structuredClone(g.models.snapshot()));
    expect(copy.snapshot()).toEqual(g.models.snapshot());
    expect(queuedIds(copy)).toEqual(['a', 'b']);
  });
});

describe('the host takes replies once', () => {
  const replies = (...ids: string[]) => ids.map((replyId) => replyReceived({ replyId }));
  const take =
    (limit: number, chatId?: string): Decision =>
    (m) =>
      takeReplies(m, limit, 'operator', chatId);
  const handed = (...replyIds: string[]) => ({ type: 'phone.replies_handed' as const, data: { replyIds, by: 'operator' } });

  it('hands what was not handed, oldest first, up to the limit; nothing left decides nothing', () => {
    const g = given(replies('r1', 'r2', 'r3'));
    g.when(take(2)).then([handed('r1', 'r2')]);
    g.when(take(10)).then([handed('r3')]);
    g.when(take(10)).then([]);
    // The cursor view still has them all.
    expect(g.models.phoneThreads.repliesAfter(0).map((r) => r.replyId)).toEqual(['r1', 'r2', 'r3']);
  });

  it('takes one chat when asked, leaving the others', () => {
    const g = given([replyReceived({ replyId: 'a1', chatId: 'a' }), replyReceived({ replyId: 'b1', chatId: 'b' })])
      .when(take(10, 'b'))
      .then([handed('b1')]);
    expect(g.models.phoneThreads.unhanded().map((r) => r.replyId)).toEqual(['a1']);
  });

  it('survives a snapshot and restore; a snapshot from before the field counts as not handed', () => {
    const g = new Given().apply([...replies('x', 'y'), repliesHanded({ replyIds: ['x'] })]);
    const snap = g.models.phoneThreads.snapshot();
    const back = new ReadModels();
    back.phoneThreads.restore(snap);
    expect(back.phoneThreads.unhanded().map((r) => r.replyId)).toEqual(['y']);
    const old = { ...snap, replies: snap.replies.map(({ handed: _h, ...r }) => r) } as unknown as typeof snap;
    back.phoneThreads.restore(old);
    expect(back.phoneThreads.unhanded().map((r) => r.replyId)).toEqual(['x', 'y']);
  });

  it('a reply is recorded as the phone sent it; a blank one is refused', () => {
    const reply = replyReceived({ replyId: 'r' }).data satisfies Reply;
    given()
      .when((m) => recordReply(m, reply))
      .then([{ type: 'phone.reply_received', data: reply }]);
    given()
      .when((m) => recordReply(m, { ...reply, text: '  ' }))
      .thenThrows('phone.empty_text', 'invalid');
  });

  it('past the bound, handed replies leave before untaken ones', () => {
    const g = new Given().apply(replies('old-untaken', ...Array.from({ length: REPLIES_KEPT }, (_, i) => `r${i}`)));
    // Nothing handed yet: the oldest untaken goes.
    expect(g.models.phoneThreads.reply('old-untaken')).toBeUndefined();
    given(g)
      .when(take(1))
      .then([handed('r0')]);
    g.apply(replies('newest'));
    expect(g.models.phoneThreads.reply('r0')).toBeUndefined();
    expect(g.models.phoneThreads.reply('r1')).toBeDefined();
    expect(g.models.phoneThreads.unhanded()).toHaveLength(REPLIES_KEPT);
  });
});
