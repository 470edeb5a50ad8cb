import { randomUUID } from 'node:crypto';
import { bearer, pairPhone, Phone, type Frame, type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';
import { call, type Json } from '../support/http';

/**
 * The phone app on the `proactive` channel, `/phone/threads`, `/chat/image-activity` and the
 * `notifications` channel: the frames it sends, byte for byte as its serializer writes them, and the
 * fields it reads. The app's socket JSON encodes defaults (ChannelMultiplexer.kt:33-36), so every frame
 * carries `id` (a UUID), `payload` (`{}` when empty) and `profiles: null` (models/Envelope.kt:22-29).
 */
function appFrame(phone: Phone, channel: string, type: string, payload: Json = {}): string {
  const id = randomUUID();
  phone.ws.send(JSON.stringify({ channel, type, id, payload, profiles: null }));
  return id;
}

/** ProactiveMessageHandler.kt:139-152 `parse`: what the app keeps of a `phone.message`, as Kotlin reads it. */
function parse(f: Frame) {
  const p = f.payload;
  const content = (v: unknown): string | null => (v === null || v === undefined || typeof v === 'object' ? null : String(v));
  const sentAt = content(p.sent_at);
  return {
    messageId: content(p.message_id),
    chatId: content(p.chat_id),
    text: content(p.text),
    title: content(p.title),
    surfacing: content(p.surfacing),
    // `contentOrNull?.toLongOrNull()`: an integer, or nothing.
    sentAt: sentAt !== null && /^-?\d+$/.test(sentAt) ? Number(sentAt) : null,
    replyTo: content(p.reply_to),
    arrivedWhileAway: p.queued_delivery === true,
  };
}

const NOW_MS = Date.parse('2026-03-01T12:00:00.000Z');

describe('compat: the phone app on Phone Threads', () => {
  let relay: TestRelay;
  let phone: Phone;
  let token: string;

  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    ({ phone, token } = await pairPhone(relay));
  });
  afterAll(async () => {
    phone?.close();
    await relay?.close();
  });

  it('subscribe (ConnectionViewModel.kt:2583, an empty payload) is acknowledged, then the (empty) backlog completes', async () => {
    appFrame(phone, 'proactive', 'proactive.subscribe');
    expect((await phone.type('proactive', 'proactive.subscribed')).payload).toMatchObject({ ok: true });
    // ProactiveMessageHandler.kt:87-90 reads `count` and ignores 0.
    expect((await phone.type('proactive', 'proactive.backlog.complete')).payload.count).toBe(0);
  });

  it('a live phone.message carries every field the app reads: sent_at in epoch ms (an integer), no away marker', async () => {
    const r = await call(relay, 'POST', '/phone/message', {
      chat_id: 'phone',
      text: 'build is green',
      title: 'Phone',
      surfacing: null,
      reply_to: null,
      metadata: {},
    });
    expect(r.status).toBe(200);
    const msg = parse(await phone.type('proactive', 'phone.message'));
    expect(msg).toEqual({
      messageId: r.body.message_id,
      chatId: 'phone',
      text: 'build is green',
      title: 'Phone',
      // ProactiveMessageHandler.kt:113-126: "default" takes the notification branch, like null.
      surfacing: 'default',
      sentAt: NOW_MS,
      replyTo: null,
      arrivedWhileAway: false,
    });
  });

  it('messages queued while away arrive marked queued_delivery, then one backlog.complete with their count', async () => {
    phone.close();
    await phone.closed;
    relay.clock.advance(5000);
    const ids: string[] = [];
    for (const [text, surfacing] of [
      ['first', 'inbox'],
      ['second', 'session'],
    ]) {
      ids.push(
        (await call(relay, 'POST', '/phone/message', { chat_id: 'phone', text, title: 'Phone', surfacing, reply_to: null, metadata: {} })).body
          .message_id,
      );
    }
    phone = await Phone.connect(relay.url);
    expect((await phone.auth({ session_token: token })).type).toBe('auth.ok');
    appFrame(phone, 'proactive', 'proactive.subscribe');
    const got = [parse(await phone.type('proactive', 'phone.message')), parse(await phone.type('proactive', 'phone.message'))];
    expect(got.map((m) => [m.messageId, m.text, m.surfacing, m.arrivedWhileAway, m.sentAt])).toEqual([
      [ids[0], 'first', 'inbox', true, NOW_MS + 5000],
      [ids[1], 'second', 'session', true, NOW_MS + 5000],
    ]);
    expect((await phone.type('proactive', 'proactive.backlog.complete')).payload.count).toBe(2);
  });

  it('proactive.reply with the app-minted message_id (ConnectionViewModel.kt:2625-2641) is acknowledged with client_msg_id and status', async () => {
    const clientId = randomUUID();
    appFrame(phone, 'proactive', 'proactive.reply', { text: 'sounds good', chat_id: 'phone', reply_to: 'm-1', message_id: clientId, ts: Date.now() });
    // ProactiveMessageHandler.kt:93-97: `client_msg_id` settles the bubble; `status` defaults to "received".
    const ack = await phone.type('proactive', 'proactive.reply.ack');
    expect(ack.payload).toMatchObject({ client_msg_id: clientId, status: 'received' });
    // The notification inline reply (ProactiveReplyReceiver.kt:83-93) sends no message_id: still acknowledged.
    appFrame(phone, 'proactive', 'proactive.reply', { text: 'from the shade', chat_id: 'phone', ts: Date.now() });
    const bare = await phone.type('proactive', 'proactive.reply.ack');
    expect(typeof bare.payload.client_msg_id).toBe('string');
    expect(bare.payload.status).toBe('received');
    // The host gets both, the first under the app's id.
    const host = await call(relay, 'GET', '/phone/replies?timeout=25');
    expect(host.body.replies.map((r: Json) => [r.text, r.message_id, r.reply_to])).toEqual([
      ['sounds good', clientId, 'm-1'],
      ['from the shade', bare.payload.client_msg_id, null],
    ]);
  });

  it('GET /phone/threads with the bearer: each thread has session_id, chat_id, title (RelayHttpClient.kt:599-612)', async () => {
    // The host names its session for the conversation when it knows it (our addition; see PROTOCOL.md).
    await call(relay, 'POST', '/phone/message', { chat_id: 'ops', text: 'deploy done', title: 'Ops', session_id: '20260301_120000_ab12cd' });
    const r = await call(relay, 'GET', '/phone/threads', undefined, { ...bearer(token), 'x-forwarded-for': '203.0.113.7' });
    expect(r.status).toBe(200);
    const threads = r.body.threads as Json[];
    for (const t of threads) {
      expect(typeof t.session_id).toBe('string');
      expect(typeof t.chat_id).toBe('string');
      expect(t.title === null || typeof t.title === 'string').toBe(true);
    }
    // ConnectionViewModel.kt:2532-2537: blanks are skipped; the named session maps to its chat.
    const map = Object.fromEntries(threads.filter((t) => t.session_id && t.chat_id).map((t) => [t.session_id, t.chat_id]));
    expect(map).toEqual({ '20260301_120000_ab12cd': 'ops' });
  });

  describe('/chat/image-activity as the app polls it (ChatViewModel.kt:7773-7808)', () => {
    const session = '20260301_115959_ff00aa';
    const feed = (body: Json) => call(relay, 'POST', '/chat/image-activity', body);
    // RelayHttpClient.kt:189-194: profile, session_id, and `since` as Kotlin's Double.toString writes it.
    const poll = (since: string) =>
      call(relay, 'GET', `/chat/image-activity?profile=default&session_id=${session}&since=${since}`, undefined, {
        ...bearer(token),
        'x-forwarded-for': '203.0.113.7',
      });

    it('answers the ImageActivitySnapshot (RelayHttpClient.kt:148-162) for since=1.7E9 and the like', async () => {
      expect((await feed({ session_id: session, call_id: 'call_1', status: 'started' })).status).toBe(200);
      // The turn began a second before the call: (assistantTimestamp / 1000.0) - 1.0.
      const since = `${(NOW_MS + 5000 - 1000) / 1000}`.replace(/^(\d)(\d*)$/, '$1.$2E9');
      expect(since).toBe('1.772366404E9');
      for (const s of ['1.7E9', since]) {
        const r = await poll(s);
        expect([s, r.status]).toEqual([s, 200]);
        expect(r.body).toMatchObject({ session_id: session, profile: 'default' });
        expect(r.body.activities).toEqual([
          {
            call_id: 'call_1',
            tool_name: 'image_generate',
            state: 'running',
            started_at: (NOW_MS + 5000) / 1000,
            completed_at: null,
            progress: null,
            error_code: null,
          },
        ]);
      }
      relay.clock.advance(2500);
      await feed({ session_id: session, call_id: 'call_1', status: 'progress', progress: 50 });
      await feed({ session_id: session, call_id: 'call_1', status: 'completed' });
      const done = await poll(since);
      // The app marks the call done when `state` is "completed" (ChatViewModel.kt:7798-7803).
      expect(done.body.activities).toMatchObject([
        { call_id: 'call_1', state: 'completed', started_at: (NOW_MS + 5000) / 1000, completed_at: (NOW_MS + 7500) / 1000 },
      ]);
      // Three failures in a row and the app stops polling (ChatViewModel.kt:7788-7792): every poll shape answers 200.
      for (const s of ['1.7E9', '1.772366404E9', '1772366404.5', '0.0']) expect((await poll(s)).status).toBe(200);
      expect((await poll('1.7E10')).body.activities).toEqual([]);
    });
  });

  it('notification.posted exactly as the app encodes it (NotificationModels.kt:21-32, HermesNotificationCompanion.kt:186-193)', async () => {
    const postedAt = NOW_MS - 60_000;
    appFrame(phone, 'notifications', 'notification.posted', {
      package_name: 'com.example.chat',
      title: 'Ana',
      text: 'lunch?',
      sub_text: null,
      posted_at: postedAt,
      key: '0|com.example.chat|1|null|10123',
    });
    appFrame(phone, 'notifications', 'notification.posted', {
      package_name: 'com.example.mail',
      title: null,
      text: null,
      sub_text: 'work@example.com',
      posted_at: postedAt,
      key: '0|com.example.mail|2|null|10124',
    });
    // The relay answers on `notifications`, which the app's multiplexer ignores (ChannelMultiplexer.kt:99-101).
    await phone.type('notifications', 'notification.ok');
    await phone.type('notifications', 'notification.ok');
    const recent = await call(relay, 'GET', '/notifications/recent');
    expect(recent.body.notifications.map((n: Json) => [n.package_name, n.title, n.text, n.sub_text, n.posted_at, n.key])).toEqual([
      // posted_at comes back in epoch ms: plugin/tools/android_notifications.py:48-49 describes it so to the model.
      ['com.example.mail', null, null, 'work@example.com', postedAt, '0|com.example.mail|2|null|10124'],
      ['com.example.chat', 'Ana', 'lunch?', null, postedAt, '0|com.example.chat|1|null|10123'],
    ]);
    expect(phone.frames.filter((f) => f.channel === 'system' && f.type === 'error')).toEqual([]);
  });
});
