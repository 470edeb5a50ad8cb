import { bearer, pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';

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
    const before = relay.log.lastSeq;
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
});
