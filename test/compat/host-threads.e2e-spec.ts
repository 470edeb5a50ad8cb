import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import { PhoneThreadsService } from '../../apps/relay/src/threads/threads.service';
import { pairPhone, readEvents, type Phone, type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';
import { type Json } from '../support/http';

/**
 * The agent host's phone platform (plugin/phone_platform.py, PhoneAdapter) as it talks to the relay:
 * outbound `POST /phone/message`, inbound a loop of `GET /phone/replies?timeout=25` with no cursor that
 * dispatches every reply in each answer to the agent (`_run_reply_loop`, lines 380-441). It keeps no
 * place of its own, so the relay must hand each reply exactly once: the reference relay drains a buffer;
 * ours records the hand-over as `phone.replies_handed`, so a restart neither repeats nor loses one.
 */

// phone_platform.py:128-135 and 390: the path and the one query parameter the loop sends.
const HOST_POLL = '/phone/replies?timeout=25';

/** The adapter's httpx requests: JSON body with `Content-Type: application/json`, no bearer (phone_platform.py:175-186, 237-251). */
async function host(relay: TestRelay, method: 'GET' | 'POST', path: string, body?: Json) {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
}

/**
 * phone_platform.py:195-224 `_build_message_payload` for `send(chat_id, content, reply_to, metadata)`:
 * every key present, `title` the home channel name, `surfacing` null unless metadata names one.
 */
const sendPayload = (text: string, replyTo: string | null = null): Json => ({
  chat_id: 'phone',
  text,
  title: 'Phone',
  surfacing: null,
  reply_to: replyTo,
  metadata: {},
});

/** The app's reply (ConnectionViewModel.kt:2625-2641 `sendProactiveReply`): an Envelope with a UUID id. */
function appReply(phone: Phone, text: string, messageId?: string, replyTo?: string): void {
  phone.ws.send(
    JSON.stringify({
      channel: 'proactive',
      type: 'proactive.reply',
      id: randomUUID(),
      payload: { text, chat_id: 'phone', ...(replyTo ? { reply_to: replyTo } : {}), ...(messageId ? { message_id: messageId } : {}), ts: Date.now() },
    }),
  );
}

/** What `_run_reply_loop` does with an answer (phone_platform.py:429-441, `_normalize_reply` 271-294). */
function dispatched(body: Json): Array<{ text: string; chat_id: string; reply_to: unknown; message_id: string }> {
  const replies = (Array.isArray(body.replies) ? body.replies : []) as Json[];
  return replies
    .filter((r) => typeof r.text === 'string' && r.text.trim() !== '')
    .map((r) => ({ text: r.text, chat_id: r.chat_id || 'phone', reply_to: r.reply_to, message_id: String(r.message_id) }));
}

async function heldPolls(relay: TestRelay, n: number): Promise<void> {
  const threads = relay.app.get(PhoneThreadsService);
  for (let i = 0; i < 500 && threads.heldPolls !== n; i++) await new Promise((r) => setTimeout(r, 10));
  expect(threads.heldPolls).toBe(n);
}

describe('compat: the host platform (PhoneAdapter) on Phone Threads', () => {
  let relay: TestRelay;
  let phone: Phone;
  let token: string;

  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    ({ phone, token } = await pairPhone(relay));
    phone.ws.send(JSON.stringify({ channel: 'proactive', type: 'proactive.subscribe', id: randomUUID(), payload: {} }));
    await phone.type('proactive', 'proactive.backlog.complete');
  });
  afterAll(async () => {
    phone?.close();
    await relay?.close();
  });

  it("send(): the adapter's exact body is accepted and the answer names the message (send() reads only status and message_id)", async () => {
    const r = await host(relay, 'POST', '/phone/message', sendPayload('build is green'));
    // phone_platform.py:520-540: 503 is "no phone", >= 300 a failure, then `message_id` from the JSON.
    expect(r.status).toBe(200);
    expect(typeof r.body.message_id).toBe('string');
    const f = await phone.type('proactive', 'phone.message');
    expect(f.payload).toMatchObject({ message_id: r.body.message_id, text: 'build is green', title: 'Phone' });
    // An answer to a reply carries the phone's own reply id as reply_to (MessageEvent.message_id, :313-318);
    // the app mints those (UUIDs, or 12 hex characters from the reference relay).
    for (const replyTo of [randomUUID(), 'a1b2c3d4e5f6']) {
      expect((await host(relay, 'POST', '/phone/message', sendPayload('answer', replyTo))).status).toBe(200);
      await phone.type('proactive', 'phone.message');
    }
  });

  it('the reply poll: each reply reaches the loop once; the next identical poll is held, not answered again', async () => {
    appReply(phone, 'yes, ship it', 'client-1', 'm-1');
    await phone.type('proactive', 'proactive.reply.ack');
    const first = await host(relay, 'GET', HOST_POLL);
    expect(first.status).toBe(200);
    expect(dispatched(first.body)).toEqual([{ text: 'yes, ship it', chat_id: 'phone', reply_to: 'm-1', message_id: 'client-1' }]);
    expect(first.body.replies[0].metadata).toEqual({});

    // The loop polls again at once (phone_platform.py:392-441). The old relay answered the same reply
    // again, immediately, forever (issue 11 item 15: 1,937 dispatches in 3 s).
    const second = host(relay, 'GET', HOST_POLL);
    await heldPolls(relay, 1);
    appReply(phone, 'and one more', 'client-2');
    const got = await second;
    expect(dispatched(got.body).map((r) => r.text)).toEqual(['and one more']);

    const handed = readEvents(relay.home).filter((e) => e.type === 'phone.replies_handed');
    expect(handed.map((e) => e.data.replyIds as string[]).flat()).toHaveLength(2);
    expect(handed.every((e) => e.actor === 'operator')).toBe(true);
  });

  it('a burst of polls dispatches a reply once in total (the loop run for many rounds)', async () => {
    for (const t of ['one', 'two', 'three']) appReply(phone, t);
    for (let i = 0; i < 3; i++) await phone.type('proactive', 'proactive.reply.ack');
    const counts = new Map<string, number>();
    // Ten rounds of the loop, the same request each time; whatever is left waits for a reply that never
    // comes, so those rounds use timeout=0 only to end the test without holding it for 25 s.
    const rounds = [await host(relay, 'GET', HOST_POLL)];
    for (let i = 0; i < 9; i++) rounds.push(await host(relay, 'GET', '/phone/replies?timeout=0'));
    for (const r of rounds) for (const d of dispatched(r.body)) counts.set(d.text, (counts.get(d.text) ?? 0) + 1);
    expect(Object.fromEntries(counts)).toEqual({ one: 1, two: 1, three: 1 });
  });

  it('two polls at once share the replies out, never both answering one', async () => {
    const a = host(relay, 'GET', HOST_POLL);
    const b = host(relay, 'GET', HOST_POLL);
    await heldPolls(relay, 2);
    appReply(phone, 'only once please');
    const [ra, rb] = await Promise.all([
      a,
      // The poll that lost the race answers empty at once or keeps waiting; end it with another reply.
      (async () => {
        await new Promise((r) => setTimeout(r, 50));
        appReply(phone, 'second');
        return b;
      })(),
    ]);
    const all = [...dispatched(ra.body), ...dispatched(rb.body)].map((d) => d.text);
    const leftover = dispatched((await host(relay, 'GET', '/phone/replies?timeout=0')).body).map((d) => d.text);
    expect([...all, ...leftover].sort()).toEqual(['only once please', 'second']);
  });

  it('a poll whose caller went away takes nothing: the reply goes to the next poll', async () => {
    // A plain socket that closes mid-poll (fetch's abort leaves a pooled connection behind in the test
    // process, which would only slow the relay's shutdown here).
    const abandoned = http.request(`${relay.url}${HOST_POLL}`);
    abandoned.on('error', () => undefined);
    abandoned.end();
    await heldPolls(relay, 1);
    abandoned.destroy();
    await heldPolls(relay, 0);
    appReply(phone, 'nobody was listening');
    await phone.type('proactive', 'proactive.reply.ack');
    const next = await host(relay, 'GET', HOST_POLL);
    expect(dispatched(next.body).map((d) => d.text)).toEqual(['nobody was listening']);
  });

  it('across a relay restart: taken replies stay taken, untaken ones are still there, once', async () => {
    appReply(phone, 'before the restart');
    await phone.type('proactive', 'proactive.reply.ack');
    phone.close();
    await phone.closed;
    relay = await relay.restart();
    const after = await host(relay, 'GET', HOST_POLL);
    expect(dispatched(after.body).map((d) => d.text)).toEqual(['before the restart']);
    // Nothing handed before the restart comes back.
    expect(dispatched((await host(relay, 'GET', '/phone/replies?timeout=0')).body)).toEqual([]);
    const again = await pairPhone(relay);
    phone = again.phone;
    token = again.token;
    expect(token).toBeTruthy();
  });

  it('our cursor API is unchanged for clients that pass since: read-only, everything kept, in order', async () => {
    const all = await host(relay, 'GET', '/phone/replies?since=0&wait=0');
    expect(all.body.replies.map((r: Json) => r.text)).toEqual([
      'yes, ship it',
      'and one more',
      'one',
      'two',
      'three',
      'only once please',
      'second',
      'nobody was listening',
      'before the restart',
    ]);
    const twice = await host(relay, 'GET', '/phone/replies?since=0&wait=0');
    expect(twice.body.replies).toHaveLength(9);
    expect(all.body.cursor).toBe(all.body.replies[8].cursor);
    // It took nothing: the host's next poll has nothing to hand.
    expect(dispatched((await host(relay, 'GET', '/phone/replies?timeout=0')).body)).toEqual([]);
  });

  it('a paired device polling without a cursor reads, but never takes a reply from the host', async () => {
    appReply(phone, 'for the host only');
    await phone.type('proactive', 'proactive.reply.ack');
    const remote = await fetch(`${relay.url}/phone/replies?timeout=0`, {
      headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.7' },
    });
    const seen = ((await remote.json()) as Json).replies as Json[];
    expect(seen.map((r) => r.text)).toContain('for the host only');
    expect(dispatched((await host(relay, 'GET', HOST_POLL)).body).map((d) => d.text)).toEqual(['for the host only']);
  });

  it('bad timeouts are a clean 400; a timeout above 30 is taken (the relay holds it 30 s at most, as the reference caps it)', async () => {
    for (const q of ['timeout=abc', 'timeout=-1', 'timeout=Infinity']) {
      const r = await host(relay, 'GET', `/phone/replies?${q}`);
      expect([q, r.status, r.body.ok]).toEqual([q, 400, false]);
    }
    const capped = host(relay, 'GET', '/phone/replies?timeout=3600');
    await heldPolls(relay, 1);
    appReply(phone, 'ends the capped poll');
    expect(dispatched((await capped).body).map((d) => d.text)).toEqual(['ends the capped poll']);
  });
});
