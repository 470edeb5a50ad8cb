import { bearer, pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** Odd bodies on every POST of the Threads feature: a clear 4xx, never a 500, never an event. */
describe('Threads routes refuse odd bodies cleanly', () => {
  let relay: TestRelay;
  let token: string;
  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    const p = await pairPhone(relay);
    p.phone.close();
    await p.phone.closed;
    token = p.token;
  });
  afterAll(() => relay?.close());

  const routes: Array<[string, boolean]> = [
    ['/phone/message', false],
    ['/phone/replies', true],
    ['/clipboard/inbox', true],
    ['/chat/image-activity', false],
  ];
  const bodies = ['[]', '"text"', 'null', '42', '{}', '{"text": {"nested": true}}', '{bad json', ''];

  it.each(routes)('%s', async (route, paired) => {
    const before = relay.loop.lastSeq;
    for (const body of bodies) {
      const res = await fetch(`${relay.url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(paired ? bearer(token) : {}) },
        body,
      });
      const json = (await res.json()) as Record<string, unknown>;
      expect([route, body, res.status >= 400 && res.status < 500]).toEqual([route, body, true]);
      expect(json).toMatchObject({ ok: false });
      expect(typeof json.code).toBe('string');
    }
    // Nothing of the feature was written (last-seen and socket bookkeeping may be).
    const written = readEvents(relay.home).filter((e) => e.seq > before && /^(phone\.(message|reply)|clipboard\.|chat\.)/.test(e.type));
    expect(written).toEqual([]);
  });

  it('names a bad path parameter or cancel filter by its own code and message', async () => {
    const MESSAGE = { code: 'phone.bad_message_id', error: 'message_id: 1-128 of A-Z a-z 0-9 _ . : -' };
    const cases: Array<[string, string, Record<string, string>]> = [
      ['GET', '/phone/outbound/..%2Fx', MESSAGE],
      ['DELETE', '/phone/outbound/-x', MESSAGE],
      ['GET', '/phone/outbound/a%20b', MESSAGE],
      ['GET', '/phone/threads/a%0Ab', { code: 'phone.bad_chat_id', error: 'chat_id: 1-256 printable characters' }],
      [
        'DELETE',
        '/phone/outbound?messageid=x',
        { code: 'phone.bad_cancel_query', error: 'unknown query parameter messageid: use message_id or chat_id' },
      ],
      [
        'DELETE',
        `/phone/outbound?chat_id=c&${'k'.repeat(80)}=1`,
        { code: 'phone.bad_cancel_query', error: `unknown query parameter ${'k'.repeat(64)}: use message_id or chat_id` },
      ],
      // The declared filters are checked first.
      [
        'DELETE',
        '/phone/outbound?message_id=&typo=1',
        { code: 'validation_failed', error: 'message_id: 1-128 of A-Z a-z 0-9 _ . : - (starting with a letter or digit)' },
      ],
    ];
    const before = relay.loop.lastSeq;
    for (const [method, route, body] of cases) {
      const res = await fetch(`${relay.url}${route}`, { method });
      expect([method, route, res.status, await res.json()]).toEqual([method, route, 400, { ok: false, ...body }]);
    }
    expect(readEvents(relay.home).filter((e) => e.seq > before && e.type.startsWith('phone.'))).toEqual([]);
  });
});
