import { ReadModels } from '@svc/domain';
import { eventsDir, replayLog } from '@svc/events';
import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { call, type Json } from '../support/http';
import { homeKeyFor, P_SECRET, Q_TEXT, queuedThenDelivered } from '../support/personal-keys';
import { svc } from '../support/cli';

jest.setTimeout(60_000);

/** Every route that reads a Thread message, and the console's pages, as one string. */
async function everyRoute(relay: TestRelay, messageId: string): Promise<string> {
  const paths = [
    '/phone/threads',
    '/phone/threads/ops',
    '/phone/outbound',
    `/phone/outbound/${messageId}`,
    '/console/api/threads',
    '/console/api/events?limit=500',
  ];
  let all = '';
  for (const p of paths) {
    const r = await call(relay, 'GET', p);
    expect([p, r.status]).toEqual([p, 200]);
    all += JSON.stringify(r.body);
  }
  return all;
}

/**
 * Issue 34, finding 8: a Thread message queued while no phone was subscribed was sealed under the host's
 * key; once delivered to phone P, forgetting P left it readable (also after a restart). A device's forget
 * now reaches what it received: the key that message went under is destroyed with P's own.
 */
describe("a device's forget reaches what it received", () => {
  let relay: TestRelay;
  afterEach(() => relay?.close());

  it('a message queued for no phone, then delivered to P, is unreadable on every route, in the log and after a restart once P is forgotten; what Q got later stays', async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    const { p, q, forP, forQ } = await queuedThenDelivered(relay);
    expect(
      readEvents(relay.home)
        .filter((e) => e.type === 'phone.message_delivered')
        .map((e) => e.data.tokenPrefix),
    ).toEqual([p.prefix, q.prefix]);
    expect(await everyRoute(relay, forP)).toContain(P_SECRET);

    const dry = await call(relay, 'POST', '/console/api/personal-data/forget', { device: p.prefix, dry_run: true });
    const forgot = await call(relay, 'POST', '/console/api/personal-data/forget', { device: p.prefix });
    expect(forgot.status).toBe(200);
    expect(forgot.body.keys).toBe(dry.body.keys);
    expect(forgot.body.keys).toBeGreaterThan(0);

    const check = async (r: TestRelay) => {
      const seen = await everyRoute(r, forP);
      expect(seen).not.toContain('AKIAP1SECRET');
      expect(seen).toContain(Q_TEXT);
      expect((await call(r, 'GET', `/phone/outbound/${forP}`)).body).toMatchObject({ text: '', title: null, state: 'delivered' });
      // An auditor replaying the log with the home's keys finds it forgotten too.
      const replayed = new ReadModels();
      replayLog(eventsDir(r.home), replayed, undefined, undefined, homeKeyFor(r.home));
      expect(replayed.phoneThreads.message(forP)).toMatchObject({ text: '', forgotten: true });
      expect(replayed.phoneThreads.message(forQ)).toMatchObject({ text: Q_TEXT });
    };
    await check(relay);
    p.phone.close();
    q.phone.close();
    relay = await relay.restart();
    await check(relay);

    // With no relay running, "svc relay events forget --device Q" on the home reaches Q's message the same way.
    const home = relay.home;
    await relay.close();
    const env = { SVC_HOME: home, RELAY_PORT: '1' };
    const cliDry = JSON.parse((await svc(['relay', 'events', 'forget', '--device', q.prefix, '--json'], env)).stdout) as Json;
    const cli = await svc(['relay', 'events', 'forget', '--device', q.prefix, '--yes', '--json'], env);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ via: 'files', keys: cliDry.keys });
    relay = await startRelay({ home, env: { PHONE_ENABLED: '1' } });
    expect(await everyRoute(relay, forQ)).not.toContain(Q_TEXT);
  });
});
