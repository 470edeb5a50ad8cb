import { pairPhone, type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';
import { type Json } from '../support/http';

/**
 * The desktop CLI's `relay queue` (desktop/src/commands/relay.ts:249-319): it lists `GET /phone/outbound`
 * and cancels with `DELETE /phone/outbound` (`--clear`) or `DELETE /phone/outbound?message_id=<id>`
 * (`--cancel <id>`), always with its stored bearer and `Accept: application/json` (relay.ts:82-120). It
 * prints `cancelled ${Number(body.cancelled ?? 0)} queued message(s)` and, for the list, each message's
 * `message_id` (first 12 characters), the age from `sent_at` (epoch ms) and the text.
 */
async function cli(relay: TestRelay, method: 'GET' | 'DELETE', path: string, token: string) {
  const res = await fetch(`${relay.url}${path}`, { method, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
}

/** relay.ts:270: the number the CLI prints. */
const printedCount = (body: Json): number => Number(body?.cancelled ?? 0);

describe('compat: the desktop CLI on the outbound queue', () => {
  let relay: TestRelay;
  let token: string;
  const post = async (text: string) =>
    (
      await fetch(`${relay.url}/phone/message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chat_id: 'phone', text }),
      }).then((r) => r.json() as Promise<Json>)
    ).message_id as string;

  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    const p = await pairPhone(relay);
    token = p.token;
    p.phone.close();
    await p.phone.closed;
  });
  afterAll(() => relay?.close());

  it('`relay queue` lists what it prints: queued, message_id, sent_at in epoch ms, text', async () => {
    const a = await post('first waiting');
    relay.clock.advance(90_000);
    const b = await post('second waiting');
    const r = await cli(relay, 'GET', '/phone/outbound', token);
    expect(r.status).toBe(200);
    expect(r.body.queued).toBe(2);
    const t0 = Date.parse('2026-03-01T12:00:00.000Z');
    expect(r.body.messages.map((m: Json) => [m.message_id, m.chat_id, m.text, m.sent_at])).toEqual([
      [a, 'phone', 'first waiting', t0],
      [b, 'phone', 'second waiting', t0 + 90_000],
    ]);
    await cli(relay, 'DELETE', '/phone/outbound', token);
  });

  it('`relay queue --cancel <id>` cancels that message only (issue 11 item 14: it used to cancel the whole queue)', async () => {
    const ids = [await post('keep me'), await post('cancel me'), await post('keep me too')];
    const r = await cli(relay, 'DELETE', `/phone/outbound?message_id=${encodeURIComponent(ids[1])}`, token);
    expect(r.status).toBe(200);
    expect(printedCount(r.body)).toBe(1);
    const left = await cli(relay, 'GET', '/phone/outbound', token);
    expect(left.body.messages.map((m: Json) => m.message_id)).toEqual([ids[0], ids[2]]);
    expect(left.body.queued).toBe(2);

    // Again, or an id never queued: 200 and "cancelled 0" (the CLI treats anything but 200 as an error).
    for (const id of [ids[1], 'no-such-message']) {
      const again = await cli(relay, 'DELETE', `/phone/outbound?message_id=${encodeURIComponent(id)}`, token);
      expect([id, again.status, printedCount(again.body)]).toEqual([id, 200, 0]);
    }
    expect((await cli(relay, 'GET', '/phone/outbound', token)).body.queued).toBe(2);
  });

  it('`--cancel` with the id as the list prints it (its first 12 characters) cancels that message; an ambiguous prefix is 409', async () => {
    const ids = [await post('shown cut short'), await post('another')];
    const shown = ids[0].slice(0, 12); // relay.ts:310
    const r = await cli(relay, 'DELETE', `/phone/outbound?message_id=${encodeURIComponent(shown)}`, token);
    expect([r.status, printedCount(r.body), r.body.message_ids]).toEqual([200, 1, [ids[0]]]);
    // Too short to be taken as an id: nothing is cancelled.
    expect(printedCount((await cli(relay, 'DELETE', `/phone/outbound?message_id=${ids[1].slice(0, 4)}`, token)).body)).toBe(0);
    const remaining = (await cli(relay, 'GET', '/phone/outbound', token)).body.messages.map((m: Json) => m.message_id);
    expect(remaining).toContain(ids[1]);
    expect(remaining).not.toContain(ids[0]);
    await cli(relay, 'DELETE', `/phone/outbound?message_id=${ids[1]}`, token);

    for (const id of ['abcdefgh-1', 'abcdefgh-2']) {
      await fetch(`${relay.url}/phone/message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: id, message_id: id }),
      });
    }
    const both = await cli(relay, 'DELETE', '/phone/outbound?message_id=abcdefgh', token);
    expect(both.status).toBe(409);
    expect(both.body).toMatchObject({ ok: false, code: 'phone.ambiguous_id', matches: 2 });
    const still = (await cli(relay, 'GET', '/phone/outbound', token)).body.messages.map((m: Json) => m.message_id);
    expect(still).toEqual(expect.arrayContaining(['abcdefgh-1', 'abcdefgh-2']));
    for (const id of ['abcdefgh-1', 'abcdefgh-2'])
      expect(printedCount((await cli(relay, 'DELETE', `/phone/outbound?message_id=${id}`, token)).body)).toBe(1);
  });

  it('`relay queue --clear` cancels all and prints the count; a misspelt filter is refused, never widened to all', async () => {
    const typo = await cli(relay, 'DELETE', '/phone/outbound?messageid=x', token);
    expect(typo.status).toBe(400);
    expect(typo.body).toMatchObject({ ok: false, code: 'phone.bad_cancel_query' });
    expect((await cli(relay, 'DELETE', '/phone/outbound?message_id=', token)).status).toBe(400);
    expect((await cli(relay, 'GET', '/phone/outbound', token)).body.queued).toBe(2);
    const r = await cli(relay, 'DELETE', '/phone/outbound', token);
    expect(r.status).toBe(200);
    expect(printedCount(r.body)).toBe(2);
    expect((await cli(relay, 'GET', '/phone/outbound', token)).body).toMatchObject({ queued: 0, messages: [] });
  });
});
