import { MAX_JSON_DEPTH } from '@svc/events';
import { json, pairPhone, Phone, readEvents, startRelay, type TestRelay } from '../support/harness';

const nested = (depth: number, leaf = '1') => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

/**
 * Bodies and frames nested past MAX_JSON_DEPTH are refused on the raw text, before anything walks the
 * parsed value: 20,000 levels used to reach the validation pipe's recursive walk and answer 500.
 */
describe('hostile input: JSON nesting', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
  });
  afterAll(() => relay.close('test done'));

  const post = (path: string, body: string) =>
    fetch(`${relay.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it.each([
    ['POST /pairing (public)', '/pairing', nested(20_000)],
    ['POST /pairing (arrays in a field)', '/pairing', `{"device_name":${arrays(20_000)}}`],
    ['POST /pairing/register (loopback)', '/pairing/register', `{"code":"DEEP01","grants":${nested(100)}}`],
    ['POST /phone/message', '/phone/message', `{"chat_id":"phone","text":"x","metadata":${nested(MAX_JSON_DEPTH)}}`],
  ])('%s: 400 json_too_deep, no event', async (_name, path, body) => {
    const before = relay.loop.lastSeq;
    const res = await post(path, body);
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ ok: false, error: `the body nests JSON deeper than ${MAX_JSON_DEPTH} levels`, code: 'json_too_deep' });
    await relay.loop.drain();
    expect(relay.loop.lastSeq).toBe(before);
  });

  it('nesting up to the limit, and brackets inside strings, are accepted', async () => {
    const deepText = '{'.repeat(5_000) + '"\\"[' + '['.repeat(5_000);
    const res = await post('/phone/message', `{"chat_id":"phone","text":${JSON.stringify(deepText)},"metadata":${nested(MAX_JSON_DEPTH - 1)}}`);
    expect(res.status).toBe(200);
    expect((await json(res)).ok).toBe(true);
  });

  it('the relay still answers after a flood of deep bodies', async () => {
    await Promise.all(Array.from({ length: 20 }, () => post('/pairing', nested(50_000))));
    expect((await fetch(`${relay.url}/health`)).status).toBe(200);
  });

  it('a deep frame before auth fails auth; after auth it is a bad_frame error and the socket stays', async () => {
    const stranger = await Phone.connect(relay.url);
    stranger.sendRaw(`{"channel":"system","type":"auth","payload":${nested(2_000)}}`); // under the 16 KiB first-frame cap
    const fail = await stranger.type('system', 'auth.fail');
    expect(String(fail.payload.reason)).toMatch(/deeper than/);

    const { phone } = await pairPhone(relay);
    phone.sendRaw(`{"channel":"proactive","type":"proactive.subscribe","id":"d1","payload":${nested(20_000)}}`);
    const err = await phone.next((f) => f.type.endsWith('error'));
    expect(err.payload).toMatchObject({ code: 'bad_frame' });
    phone.send('system', 'ping', { ts: 1 }, 'p1');
    expect((await phone.type('system', 'pong')).id).toBe('p1');
    phone.close();
    stranger.close();
    const types = readEvents(relay.home).map((e) => e.type);
    expect(types.filter((t) => t === 'phone.connected')).toHaveLength(1);
  });
});
