import { bearer, pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { call, REMOTE, type Json } from '../support/http';

describe('notification companion', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay?.close());

  it('keeps the latest 100 entries, newest first, with ?limit=', async () => {
    // No grant is needed on the notifications channel: this phone holds none at all but chat's default is removed.
    const { phone } = await pairPhone(relay, { terms: { grants: { chat: false, terminal: false, tui: false, bridge: false, desktop: false } } });
    for (let i = 0; i < 105; i++) {
      phone.send(
        'notifications',
        'notification.posted',
        { package_name: 'com.example.mail', title: `t${i}`, text: `body ${i}`, posted_at: 1772366400 + i, key: `k${i}` },
        `n${i}`,
      );
    }
    for (let i = 0; i < 105; i++) await phone.next((f) => f.type === 'notification.ok' && f.id === `n${i}`);
    const all = await call(relay, 'GET', '/notifications/recent');
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(100);
    expect(all.body.notifications).toHaveLength(100);
    expect(all.body.notifications[0]).toMatchObject({
      package_name: 'com.example.mail',
      title: 't104',
      text: 'body 104',
      posted_at: 1772366504_000,
      key: 'k104',
      device_name: 'Test phone',
    });
    expect(all.body.notifications[99].title).toBe('t5');
    const five = await call(relay, 'GET', '/notifications/recent?limit=5');
    expect(five.body.notifications.map((n: Json) => n.title)).toEqual(['t104', 't103', 't102', 't101', 't100']);
    for (const bad of ['0', '101', 'abc', '2.5']) {
      const r = await call(relay, 'GET', `/notifications/recent?limit=${bad}`);
      expect(r.status).toBe(400);
      expect(r.body.ok).toBe(false);
    }
    phone.close();
  });

  it('the same key replaces its entry; notification.removed drops it; unknown types are ignored', async () => {
    const { phone } = await pairPhone(relay);
    phone.send('notifications', 'notification.posted', { package_name: 'com.chat', title: 'old', key: 'same' }, 'a');
    await phone.next((f) => f.id === 'a');
    phone.send('notifications', 'notification.posted', { package_name: 'com.chat', title: 'new', key: 'same', some_new_field: [1, 2] }, 'b');
    await phone.next((f) => f.id === 'b');
    let list = (await call(relay, 'GET', '/notifications/recent')).body.notifications as Json[];
    expect(list.filter((n) => n.key === 'same').map((n) => n.title)).toEqual(['new']);
    phone.send('notifications', 'notification.removed', { key: 'same' });
    phone.send('notifications', 'notification.from_the_future', { anything: true });
    phone.send('system', 'ping', { ts: 1 }, 'p1');
    // Frames of one socket are handled in order: the pong means both frames before it are recorded.
    await phone.next((f) => f.type === 'pong' && f.id === 'p1');
    list = (await call(relay, 'GET', '/notifications/recent')).body.notifications as Json[];
    expect(list.some((n) => n.key === 'same')).toBe(false);
    expect(phone.frames.some((f) => f.type === 'error')).toBe(false);
    // A malformed entry is refused on the channel (notifications.error); the socket stays open.
    phone.send('notifications', 'notification.posted', { title: 'no package' }, 'bad');
    const err = await phone.next((f) => f.channel === 'notifications' && f.type === 'notifications.error');
    expect(err.payload).toMatchObject({ code: 'notifications.bad_field', field: 'package_name', channel: 'notifications' });
    phone.send('notifications', 'notification.posted', { package_name: 'x', posted_at: 'yesterday' }, 'bad2');
    expect((await phone.next((f) => f.channel === 'notifications' && f.type === 'notifications.error')).payload.field).toBe('posted_at');
    phone.close();
  });

  it('auth split: loopback without a bearer, a paired bearer from elsewhere', async () => {
    const { phone, token } = await pairPhone(relay);
    const local = await fetch(`${relay.url}/notifications/recent`);
    expect(local.status).toBe(200);
    expect(local.headers.get('cache-control')).toBe('no-store');
    const remote = await call(relay, 'GET', '/notifications/recent', undefined, REMOTE);
    expect(remote.status).toBe(401);
    expect(remote.body).toMatchObject({ ok: false, code: 'auth.missing_bearer' });
    expect(
      (await call(relay, 'GET', '/notifications/recent', undefined, { ...REMOTE, authorization: 'Bearer not-a-real-token-at-all' })).status,
    ).toBe(401);
    expect((await call(relay, 'GET', '/notifications/recent', undefined, { ...REMOTE, ...bearer(token) })).status).toBe(200);
    phone.close();
  });

  it('is cleared by a restart (the log keeps the entries, the list does not)', async () => {
    expect((await call(relay, 'GET', '/notifications/recent')).body.count).toBeGreaterThan(0);
    relay = await relay.restart();
    expect((await call(relay, 'GET', '/notifications/recent')).body).toMatchObject({ count: 0, notifications: [] });
    expect(readEvents(relay.home).some((e) => e.type === 'notification.posted')).toBe(true);
  });
});
