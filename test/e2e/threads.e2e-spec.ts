import { bearer, pairPhone, Phone, readEvents, startRelay, type Frame, type TestRelay } from '../support/harness';
import { call, REMOTE, type Json } from '../support/http';
import { ReadModels } from '@svc/domain';
import { replayLog } from '@svc/events';
import * as path from 'node:path';
import { PhoneThreadsService } from '../../apps/relay/src/threads/threads.service';
import { homeKeyFor } from '../support/personal-keys';

const post = (relay: TestRelay, body: Json) => call(relay, 'POST', '/phone/message', body);

async function subscribe(phone: Phone, payload: Json = {}): Promise<Frame> {
  phone.send('proactive', 'proactive.subscribe', payload, 'sub-1');
  return phone.type('proactive', 'proactive.subscribed');
}

describe('Phone Threads', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1', PHONE_HOME_CHANNEL_NAME: 'Pocket', PHONE_QUEUE_MAX: '4' } });
  });
  afterAll(() => relay?.close());

  afterEach(async () => {
    // Each test starts with an empty queue.
    await call(relay, 'DELETE', '/phone/outbound');
  });

  it('delivers at once to the subscribed phone, without the backlog marker', async () => {
    const { phone } = await pairPhone(relay);
    const sub = await subscribe(phone);
    expect(sub.id).toBe('sub-1');
    expect(sub.payload).toMatchObject({ ok: true, channel_id: 'phone', home_channel_name: 'Pocket', enabled: true, queued: 0 });
    expect((await phone.type('proactive', 'proactive.backlog.complete')).payload).toMatchObject({ count: 0 });

    const r = await post(relay, { chat_id: 'c1', text: 'hello phone', title: 'Agent', surfacing: 'inbox', metadata: { k: 1 } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, delivered: true, queued: false, chat_id: 'c1', channel_id: 'phone', home_channel_name: 'Pocket' });
    const f = await phone.type('proactive', 'phone.message');
    expect(f.payload).toMatchObject({
      message_id: r.body.message_id,
      chat_id: 'c1',
      text: 'hello phone',
      title: 'Agent',
      surfacing: 'inbox',
      metadata: { k: 1 },
    });
    expect(f.payload.queued_delivery).toBeUndefined();
    const delivered = readEvents(relay.home).filter((e) => e.type === 'phone.message_delivered' && e.data.messageId === r.body.message_id);
    expect(delivered).toHaveLength(1);
    expect(delivered[0].data.queued).toBe(false);
    phone.close();
    await phone.closed;
  });

  it('validates the body: surfacing, text, ids; null surfacing and unknown fields are fine', async () => {
    expect((await post(relay, { text: 'x', surfacing: 'loud' })).status).toBe(400);
    const noText = await post(relay, { chat_id: 'c' });
    expect(noText.status).toBe(400);
    expect(noText.body).toMatchObject({ ok: false, code: 'validation_failed' });
    expect((await post(relay, { text: '   ' })).body.code).toBe('phone.empty_text');
    expect((await post(relay, { text: 'x', message_id: '../etc' })).status).toBe(400);
    expect((await post(relay, { text: 'x', metadata: [1] })).status).toBe(400);
    const ok = await post(relay, { text: 'fine', surfacing: null, some_future_field: { a: 1 } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ queued: true, chat_id: 'phone' });
    for (const s of ['default', 'notification', 'session']) expect((await post(relay, { text: s, surfacing: s })).status).toBe(200);
  });

  it('queues while nobody is subscribed, survives a restart, flushes in order with markers and a completion', async () => {
    const { phone, token } = await pairPhone(relay);
    phone.close();
    await phone.closed;
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three']) {
      const r = await post(relay, { chat_id: 'c2', text });
      expect(r.body).toMatchObject({ delivered: false, queued: true, state: 'queued' });
      expect(typeof r.body.expires_at).toBe('number');
      ids.push(r.body.message_id);
    }
    relay = await relay.restart();
    const out = await call(relay, 'GET', '/phone/outbound');
    expect(out.body.messages.map((m: Json) => m.message_id)).toEqual(ids);
    expect(out.body).toMatchObject({ count: 3, max: 4, subscribed: false, home_channel_name: 'Pocket' });

    const again = await Phone.connect(relay.url);
    expect((await again.auth({ session_token: token })).type).toBe('auth.ok');
    const sub = await subscribe(again, { share_phone_status: true, a_field_from_the_future: 1 });
    expect(sub.payload.queued).toBe(3);
    const got = [
      await again.type('proactive', 'phone.message'),
      await again.type('proactive', 'phone.message'),
      await again.type('proactive', 'phone.message'),
    ];
    expect(got.map((f) => f.payload.text)).toEqual(['one', 'two', 'three']);
    expect(got.every((f) => f.payload.queued_delivery === true)).toBe(true);
    const done = await again.type('proactive', 'proactive.backlog.complete');
    expect(done.payload.count).toBe(3);
    expect(typeof done.payload.ts).toBe('number');
    // The completion comes after the last message.
    expect(again.frames.filter((f) => f.type === 'phone.message')).toHaveLength(0);

    const flushed = readEvents(relay.home).filter((e) => e.type === 'phone.backlog_flushed');
    expect(flushed[flushed.length - 1].data).toMatchObject({ count: 3, remaining: 0, interrupted: false });
    expect((await call(relay, 'GET', '/phone/outbound')).body.count).toBe(0);
    again.close();
    await again.closed;
  });

  it('drops queued messages after 24 hours, by the relay clock', async () => {
    const r = await post(relay, { text: 'short-lived' });
    relay.clock.advanceSeconds(24 * 3600 - 1);
    await relay.sweep();
    expect((await call(relay, 'GET', '/phone/outbound')).body.count).toBe(1);
    relay.clock.advanceSeconds(2);
    await relay.sweep();
    expect((await call(relay, 'GET', '/phone/outbound')).body.count).toBe(0);
    const expired = readEvents(relay.home).filter((e) => e.type === 'phone.message_expired');
    expect(expired.map((e) => e.data.messageId)).toContain(r.body.message_id);
  });

  it('a relay that was down past the 24 hours never delivers the stale message', async () => {
    const { phone, token } = await pairPhone(relay);
    phone.close();
    await phone.closed;
    const stale = (await post(relay, { chat_id: 'down', text: 'too late' })).body.message_id;
    await relay.close();
    relay.clock.advanceSeconds(25 * 3600);
    relay = await relay.restart();
    const again = await Phone.connect(relay.url);
    expect((await again.auth({ session_token: token })).type).toBe('auth.ok');
    again.send('proactive', 'proactive.subscribe', {}, 's');
    expect((await again.type('proactive', 'proactive.backlog.complete')).payload.count).toBe(0);
    expect(again.frames.some((f) => f.type === 'phone.message')).toBe(false);
    expect(readEvents(relay.home).some((e) => e.type === 'phone.message_expired' && e.data.messageId === stale)).toBe(true);
    again.close();
    await again.closed;
  });

  it('keeps the queue bounded: the oldest is dropped first, and the drop is an event', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await post(relay, { chat_id: 'bound', text: `m${i}` })).body.message_id);
    const out = await call(relay, 'GET', '/phone/outbound?chat_id=bound');
    expect(out.body.messages.map((m: Json) => m.text)).toEqual(['m2', 'm3', 'm4', 'm5']);
    const dropped = readEvents(relay.home).filter((e) => e.type === 'phone.message_dropped');
    expect(dropped.slice(-2).map((e) => e.data)).toEqual([
      { messageId: ids[0], chatId: 'bound', reason: 'queue_full' },
      { messageId: ids[1], chatId: 'bound', reason: 'queue_full' },
    ]);
  });

  it('cancels a queued message (404 unknown, 409 twice) and never delivers it', async () => {
    const a = (await post(relay, { chat_id: 'cx', text: 'cancel me' })).body.message_id;
    await post(relay, { chat_id: 'cx', text: 'keep me' });
    expect((await call(relay, 'GET', `/phone/outbound/${a}`)).body).toMatchObject({ ok: true, message_id: a, state: 'queued', text: 'cancel me' });
    const del = await call(relay, 'DELETE', `/phone/outbound/${a}`);
    expect(del).toEqual({ status: 200, body: { ok: true, cancelled: 1, message_ids: [a] } });
    const twice = await call(relay, 'DELETE', `/phone/outbound/${a}`);
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({ ok: false, code: 'phone.not_queued', state: 'cancelled' });
    expect((await call(relay, 'DELETE', '/phone/outbound/nope')).status).toBe(404);
    expect((await call(relay, 'GET', `/phone/outbound/${a}`)).body.state).toBe('cancelled');
    expect((await call(relay, 'GET', '/phone/outbound/nope')).status).toBe(404);
    expect((await call(relay, 'GET', '/phone/outbound/..%2Fx')).status).toBe(400);
    const { phone } = await pairPhone(relay);
    await subscribe(phone);
    expect((await phone.type('proactive', 'proactive.backlog.complete')).payload.count).toBe(1);
    expect(readEvents(relay.home).some((e) => e.type === 'phone.message_cancelled' && e.data.messageId === a && e.data.by === 'operator')).toBe(true);
    phone.close();
    await phone.closed;
  });

  it('a retried message_id is answered, not queued twice', async () => {
    const first = await post(relay, { text: 'once', message_id: 'msg-42' });
    const second = await post(relay, { text: 'once', message_id: 'msg-42' });
    expect(second.body).toMatchObject({ message_id: 'msg-42', queued: true, duplicate: true });
    expect(first.body.duplicate).toBeUndefined();
    expect((await call(relay, 'GET', '/phone/outbound')).body.count).toBe(1);
    const reused = await post(relay, { text: 'something else', message_id: 'msg-42' });
    expect(reused.status).toBe(409);
    expect(reused.body).toMatchObject({ ok: false, code: 'phone.message_id_reused', state: 'queued' });
  });

  it('the latest subscriber wins; the displaced phone is told', async () => {
    const a = await pairPhone(relay);
    const b = await pairPhone(relay);
    await subscribe(a.phone);
    await subscribe(b.phone);
    expect((await a.phone.type('proactive', 'proactive.unsubscribed')).payload.reason).toBe('replaced');
    const r = await post(relay, { text: 'to b' });
    expect(r.body.delivered).toBe(true);
    expect((await b.phone.type('proactive', 'phone.message')).payload.text).toBe('to b');
    expect(a.phone.frames.some((f) => f.type === 'phone.message')).toBe(false);
    const info = (await call(relay, 'GET', '/phone/outbound')).body;
    expect(info.subscriber).toMatchObject({ token_prefix: b.prefix });
    // The subscriber leaves: messages queue again.
    b.phone.close();
    await b.phone.closed;
    for (let i = 0; i < 100 && (await call(relay, 'GET', '/phone/outbound')).body.subscribed; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await post(relay, { text: 'nobody home' })).body.queued).toBe(true);
    a.phone.close();
  });

  it('long-polls replies with a bounded wait and a cursor', async () => {
    const { phone, token } = await pairPhone(relay);
    const start = (await call(relay, 'GET', '/phone/replies?wait=0')).body.cursor as number;
    const t0 = Date.now();
    const pending = call(relay, 'GET', `/phone/replies?since=${start}&wait=10`);
    await heldPoll(relay);
    phone.send('proactive', 'proactive.reply', { chat_id: 'c9', text: 'yes please', reply_to: 'msg-42', unknown: true }, 'r1');
    const ack = await phone.type('proactive', 'proactive.reply.ok');
    expect(ack.id).toBe('r1');
    const got = await pending;
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(got.status).toBe(200);
    expect(got.body.replies).toHaveLength(1);
    expect(got.body.replies[0]).toMatchObject({ reply_id: ack.payload.reply_id, chat_id: 'c9', text: 'yes please', reply_to: 'msg-42', via: 'ws' });
    // Nothing new past the cursor; a zero wait answers at once.
    const empty = await call(relay, 'GET', `/phone/replies?since=${got.body.cursor}&wait=0`);
    expect(empty.body).toMatchObject({ replies: [], cursor: got.body.cursor });
    // A bounded wait really ends.
    const t1 = Date.now();
    const timedOut = await call(relay, 'GET', `/phone/replies?since=${got.body.cursor}&wait=1`);
    expect(timedOut.body.replies).toEqual([]);
    expect(Date.now() - t1).toBeGreaterThanOrEqual(900);
    expect((await call(relay, 'GET', '/phone/replies?wait=31')).status).toBe(400);
    expect((await call(relay, 'GET', '/phone/replies?since=abc')).status).toBe(400);
    // Replies over HTTP from the phone; the platform filters by chat.
    const http = await call(relay, 'POST', '/phone/replies', { chat_id: 'c10', text: 'via http' }, bearer(token));
    expect(http.status).toBe(200);
    const c10 = await call(relay, 'GET', `/phone/replies?since=${start}&chat_id=c10&wait=0`);
    expect(c10.body.replies.map((r: Json) => r.text)).toEqual(['via http']);
    // A bad reply frame is refused on the socket, and the socket stays.
    phone.send('proactive', 'proactive.reply', { text: '' }, 'r2');
    expect((await phone.next((f) => f.channel === 'proactive' && f.type === 'proactive.error')).payload.code).toBe('phone.bad_reply');
    phone.close();
  });

  it('shows conversation state per chat_id', async () => {
    const { phone, token } = await pairPhone(relay);
    await post(relay, { chat_id: 'conv', text: 'question?', title: 'Daily' });
    await call(relay, 'POST', '/phone/replies', { chat_id: 'conv', text: 'answer' }, bearer(token));
    const list = await call(relay, 'GET', '/phone/threads', undefined, bearer(token));
    const conv = list.body.threads.find((t: Json) => t.chat_id === 'conv');
    expect(conv).toMatchObject({ title: 'Daily', messages: 1, replies: 1, queued: 1 });
    expect(conv.last).toMatchObject({ kind: 'reply', text: 'answer' });
    const one = await call(relay, 'GET', '/phone/threads/conv', undefined, bearer(token));
    expect(one.body.entries.map((e: Json) => [e.kind, e.text])).toEqual([
      ['message', 'question?'],
      ['reply', 'answer'],
    ]);
    expect((await call(relay, 'GET', '/phone/threads/unknown-chat')).status).toBe(404);
    phone.close();
  });

  it('auth classes: loopback or a paired bearer; remote callers without a bearer are refused', async () => {
    const { phone, token } = await pairPhone(relay);
    for (const [method, path] of [
      ['GET', '/phone/outbound'],
      ['GET', '/phone/threads'],
      ['GET', '/phone/replies?wait=0'],
      ['DELETE', '/phone/outbound'],
    ]) {
      expect((await call(relay, method, path, undefined, REMOTE)).status).toBe(401);
      expect((await call(relay, method, path, undefined, { ...REMOTE, ...bearer(token) })).status).toBe(200);
    }
    expect((await call(relay, 'POST', '/phone/message', { text: 'x' }, REMOTE)).status).toBe(401);
    expect((await call(relay, 'POST', '/phone/message', { text: 'from a paired tool' }, { ...REMOTE, ...bearer(token) })).status).toBe(200);
    // Replies come from a phone: the loopback operator cannot post one.
    expect((await call(relay, 'POST', '/phone/replies', { text: 'x' })).status).toBe(401);
    phone.close();
  });

  it('replaying the log gives the same queue, threads and replies', async () => {
    await post(relay, { chat_id: 'replay', text: 'still queued' });
    const replayed = new ReadModels();
    replayLog(path.join(relay.home, 'relay', 'events'), replayed, undefined, undefined, homeKeyFor(relay.home));
    expect(replayed.phoneThreads.snapshot()).toEqual(relay.loop.models.phoneThreads.snapshot());
    expect(replayed.phoneThreads.queuedCount()).toBeGreaterThan(0);
  });

  it('message text never reaches the process log', () => {
    const all = relay.logs.join('');
    for (const text of ['hello phone', 'yes please', 'cancel me', 'question?']) expect(all).not.toContain(text);
  });
});

describe('Phone Threads at shutdown', () => {
  it('a held long-poll answers at once when the relay stops', async () => {
    const relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    const pending = call(relay, 'GET', '/phone/replies?wait=30');
    await heldPoll(relay);
    const t0 = Date.now();
    await relay.close();
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.body.replies).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe('Phone Threads switched off', () => {
  it('answers 403 while PHONE_ENABLED is not 1, and says so to subscribers', async () => {
    const relay = await startRelay();
    try {
      const r = await post(relay, { text: 'hi' });
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ ok: false, code: 'phone.disabled' });
      expect(r.body.error).toContain('PHONE_ENABLED');
      const { phone } = await pairPhone(relay);
      const sub = await subscribe(phone);
      expect(sub.payload).toMatchObject({ enabled: false, home_channel_name: 'Phone', channel_id: 'phone' });
      expect(readEvents(relay.home).some((e) => e.type === 'phone.message_posted')).toBe(false);
      phone.close();
    } finally {
      await relay.close();
    }
  });
});

describe('Phone Threads: a flush that fails midway', () => {
  it('keeps what was not written queued, and the next subscriber gets exactly that, in order', async () => {
    const relay = await startRelay({ env: { PHONE_ENABLED: '1', PHONE_QUEUE_MAX: '1000' } });
    try {
      const N = 300;
      const filler = 'x'.repeat(32_000);
      for (let i = 0; i < N; i += 50) {
        await Promise.all(
          Array.from({ length: 50 }, (_, j) => post(relay, { chat_id: 'bulk', text: `${i + j} ${filler}`, message_id: `m${i + j}` })),
        );
      }
      const order = (await call(relay, 'GET', '/phone/outbound')).body.messages.map((m: Json) => m.message_id) as string[];
      expect(order).toHaveLength(N);

      const { phone, token } = await pairPhone(relay);
      // The phone stops reading, so the relay's writes back up; then it drops off mid-flush.
      phone.send('proactive', 'proactive.subscribe', {}, 's');
      (phone.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      let flushed: Json | undefined;
      for (let i = 0; i < 300 && !flushed; i++) {
        await new Promise((r) => setTimeout(r, 20));
        if (i === 10) phone.ws.terminate();
        flushed = readEvents(relay.home).find((e) => e.type === 'phone.backlog_flushed')?.data;
      }
      expect(flushed).toMatchObject({ interrupted: true });
      const sent = flushed!.count as number;
      // About 4 MB fit in the socket buffers here; a loaded machine may have written less before the drop.
      expect(sent).toBeGreaterThanOrEqual(0);
      expect(sent).toBeLessThan(N);
      expect(flushed!.remaining).toBe(N - sent);

      const left = (await call(relay, 'GET', '/phone/outbound')).body.messages.map((m: Json) => m.message_id);
      expect(left).toEqual(order.slice(sent));

      const next = await Phone.connect(relay.url);
      expect((await next.auth({ session_token: token })).type).toBe('auth.ok');
      next.send('proactive', 'proactive.subscribe', {}, 's2');
      const done = await next.type('proactive', 'proactive.backlog.complete', 10_000);
      expect(done.payload.count).toBe(N - sent);
      const got = next.frames.filter((f) => f.type === 'phone.message').map((f) => f.payload.message_id);
      expect(got).toEqual(order.slice(sent));
      next.close();
    } finally {
      await relay.close();
    }
  }, 30_000);
});

/** Waits until the relay holds a `GET /phone/replies` long-poll open (so what follows cannot overtake it). */
async function heldPoll(relay: TestRelay): Promise<void> {
  const threads = relay.app.get(PhoneThreadsService);
  for (let i = 0; i < 500 && threads.heldPolls === 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(threads.heldPolls).toBe(1);
}
