import { bearer, pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { call, REMOTE, type Json } from '../support/http';

describe('/chat/image-activity', () => {
  let relay: TestRelay;
  let token: string;
  const feed = (body: Json, headers: Record<string, string> = {}) => call(relay, 'POST', '/chat/image-activity', body, headers);
  const read = (query: string, t = token) => call(relay, 'GET', `/chat/image-activity${query}`, undefined, bearer(t));

  beforeAll(async () => {
    relay = await startRelay();
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay?.close());

  it("reports one session's lifecycle, in order, never carrying prompts or text", async () => {
    const started = await feed({ session_id: 's1', call_id: 'call-1', status: 'started', prompt: 'a secret prompt', text: 'tool output' });
    expect(started.status).toBe(200);
    relay.clock.advance(1500);
    expect((await feed({ session_id: 's1', call_id: 'call-1', status: 'progress', progress: 40 })).status).toBe(200);
    expect((await feed({ session_id: 'other', call_id: 'call-9', status: 'started' })).status).toBe(200);
    relay.clock.advance(1500);
    expect((await feed({ session_id: 's1', call_id: 'call-1', status: 'completed', result: { url: 'x' } })).status).toBe(200);

    const r = await read('?session_id=s1');
    expect(r.status).toBe(200);
    expect(r.body.session_id).toBe('s1');
    expect(r.body.activity.map((a: Json) => [a.call_id, a.status, a.progress])).toEqual([
      ['call-1', 'started', null],
      ['call-1', 'progress', 40],
      ['call-1', 'completed', null],
    ]);
    const t0 = r.body.activity[0].ts as number;
    expect(t0).toBe(Date.parse('2026-03-01T12:00:00.000Z') / 1000);
    expect(r.body.cursor).toBe(r.body.activity[2].ts);
    const since = await read(`?session_id=s1&since=${t0}`);
    expect(since.body.activity.map((a: Json) => a.status)).toEqual(['progress', 'completed']);
    expect((await read(`?session_id=s1&since=${r.body.cursor}`)).body.activity).toEqual([]);
    expect((await read('?session_id=never-seen')).body.activity).toEqual([]);

    const stored = JSON.stringify(readEvents(relay.home).filter((e) => e.type === 'chat.image_activity'));
    expect(stored).not.toContain('secret prompt');
    expect(stored).not.toContain('tool output');
    expect(JSON.stringify(r.body)).not.toContain('secret prompt');
  });

  it('a finished call takes no more reports; failures carry a code, not a message', async () => {
    expect((await feed({ session_id: 's2', call_id: 'c', status: 'started' })).status).toBe(200);
    expect((await feed({ session_id: 's2', call_id: 'c', status: 'started' })).status).toBe(409);
    expect((await feed({ session_id: 's2', call_id: 'c', status: 'failed', error_code: 'content_policy' })).status).toBe(200);
    const late = await feed({ session_id: 's2', call_id: 'c', status: 'progress', progress: 90 });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ ok: false, code: 'image_activity.call_finished', status: 'failed' });
    expect((await feed({ session_id: 's2', call_id: 'd', status: 'failed', error_code: 'The model said: no!' })).status).toBe(400);
    expect((await feed({ session_id: 's2', call_id: 'd', status: 'done' })).status).toBe(400);
    expect((await feed({ session_id: 's2', call_id: 'd', status: 'progress', progress: 101 })).status).toBe(400);
    expect((await feed({ session_id: '../s2', call_id: 'd', status: 'started' })).status).toBe(400);
    expect((await feed({ session_id: 's2', call_id: 'd', status: 'started', progress: 5 })).body.code).toBe(
      'image_activity.progress_without_progress',
    );
    expect((await read('?session_id=s2')).body.activity.map((a: Json) => [a.status, a.error_code])).toEqual([
      ['started', null],
      ['failed', 'content_policy'],
    ]);
  });

  it('400 on a bad session_id, since or profile, each with its code and message', async () => {
    const SESSION = ['image_activity.bad_session_id', 'session_id is required: 1-256 printable characters'];
    const SINCE = ['image_activity.bad_since', 'since must be epoch seconds (a non-negative number, e.g. 1.7E9)'];
    const PROFILE = ['image_activity.bad_profile', 'profile: 1-128 printable characters'];
    const cases: Array<[string, string[]]> = [
      ['', SESSION],
      ['?session_id=', SESSION],
      ['?session_id=%20', SESSION],
      ['?session_id=a%0Ab', SESSION],
      [`?session_id=${'a'.repeat(257)}`, SESSION],
      ['?session_id=s1&since=abc', SINCE],
      ['?session_id=s1&since=-1', SINCE],
      ['?session_id=s1&since=1E', SINCE],
      ['?session_id=s1&since=Infinity', SINCE],
      ['?session_id=s1&since=1e400', SINCE],
      ['?session_id=s1&since=1&since=2', SINCE],
      ['?session_id=a&session_id=b', SESSION],
      ['?session_id=s1&profile=a%0Ab', PROFILE],
      ['?session_id=s1&profile=%20%20', PROFILE],
      [`?session_id=s1&profile=${'p'.repeat(129)}`, PROFILE],
    ];
    for (const [q, [code, error]] of cases) {
      const r = await read(q);
      expect([q, r.status, r.body]).toEqual([q, 400, { ok: false, code, error }]);
    }
  });

  it("takes any printable session id the app may hold (one the relay never saw answers empty) and Kotlin's exponent form of since", async () => {
    for (const q of ['?session_id=../x', `?session_id=${'a'.repeat(256)}`, '?session_id=s1&since=1e3', '?session_id=s1&since=1.7E9']) {
      const r = await read(q);
      expect([q, r.status]).toEqual([q, 200]);
    }
    expect((await read('?session_id=../x')).body).toMatchObject({ session_id: '../x', profile: 'default', activities: [], activity: [] });
  });

  it('needs a paired bearer with an active chat grant; the feed is loopback only', async () => {
    const noChat = await pairPhone(relay, { terms: { grants: { chat: false } } });
    const r = await read('?session_id=s1', noChat.token);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ ok: false, code: 'auth.grant_required', channel: 'chat' });
    const shortChat = await pairPhone(relay, { terms: { grants: { chat: 60 } } });
    expect((await read('?session_id=s1', shortChat.token)).status).toBe(200);
    relay.clock.advanceSeconds(61);
    await relay.sweep();
    expect((await read('?session_id=s1', shortChat.token)).status).toBe(403);
    expect((await call(relay, 'GET', '/chat/image-activity?session_id=s1')).status).toBe(401);
    expect((await feed({ session_id: 's3', call_id: 'c', status: 'started' }, REMOTE)).status).toBe(403);
    expect((await feed({ session_id: 's3', call_id: 'c', status: 'started' }, { ...REMOTE, ...bearer(token) })).status).toBe(403);
    noChat.phone.close();
    shortChat.phone.close();
  });

  it('is ephemeral: a restart clears it', async () => {
    relay = await relay.restart();
    expect((await read('?session_id=s1')).body.activity).toEqual([]);
  });
});
