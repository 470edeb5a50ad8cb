import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RelaysView } from '@svc/console-api';
import { tempHome } from '../support/harness';
import { ensureBuilt, startRelayProcess } from '../support/dist';
import { dbOf, usePostgres } from '../support/postgres';
import { pairEnv, standbyInit, startStandby, stopRelay, untilLeader, waitFor, type RelayProcess } from '../support/standby';

/**
 * Issue 38 item 6 ("The console shows both relays, their roles, epochs and lag"): a leader and a hot standby
 * on one real PostgreSQL database (real relay processes) each keep a row in svc_relay_members; the console's
 * GET /console/api/store/relays lists both, and after a takeover the new leader and epoch, the old one
 * not seen, and the takeover from the log.
 */
jest.setTimeout(180_000);
beforeAll(() => ensureBuilt(), 120_000);
const pg = usePostgres();

let running: RelayProcess[] = [];
afterEach(async () => {
  await Promise.all(running.map(stopRelay));
  running = [];
});

async function relays(url: string, key: Record<string, string>): Promise<RelaysView> {
  const res = await fetch(`${url}/console/api/store/relays`, { headers: key });
  expect(res.status).toBe(200);
  return (await res.json()) as RelaysView;
}

describe('the console lists both relays of a hot-standby pair', () => {
  it('names each role and epoch, then after a takeover the new leader, its epoch, and the old leader as not seen', async () => {
    const url = await pg.createDatabase();
    const homes = [tempHome(), tempHome()];
    const leader = await startRelayProcess(homes[0], pairEnv(url));
    running.push(leader);
    expect(await standbyInit(homes[0], homes[1], url)).toMatchObject({ code: 0 });
    const standby = await startStandby(homes[1], url);
    running.push(standby);
    const key = { 'x-operator-key': fs.readFileSync(path.join(homes[1], 'relay', 'operator.key'), 'utf8').trim() };

    // The route is the operator's, like the rest of the Store page.
    const anon = await fetch(`${standby.url}/console/api/store/relays`);
    expect(anon.status).toBe(401);
    expect(await anon.json()).toMatchObject({ ok: false, code: expect.any(String), error: expect.any(String) });

    // Both relays report (the leader on its heartbeat, the standby from its follow loop); either relay answers.
    const both = await waitFor('both relays in svc_relay_members', async () => {
      const v = await relays(standby.url, key);
      return v.relays.length === 2 ? v : null;
    });
    expect(both.supported).toBe(true);
    const byUrl = (v: RelaysView, u: string) => v.relays.find((r) => r.url === u);
    expect(byUrl(both, leader.url)).toMatchObject({ role: 'leader', epoch: 1, stale: false, self: false, lag_records: 0 });
    expect(byUrl(both, standby.url)).toMatchObject({ role: 'standby', epoch: 1, stale: false, self: true, lag_records: expect.any(Number) });
    expect(both.relays[0].url).toBe(leader.url); // the leader first
    expect(both.history).toEqual([]);
    expect(byUrl(await relays(leader.url, key), leader.url)).toMatchObject({ role: 'leader', self: true });
    // One row per relay home, nothing secret in it (no home path, no key).
    const rows = await pg.query(dbOf(url), 'SELECT * FROM svc_relay_members');
    expect(rows).toHaveLength(2);
    expect(JSON.stringify(rows)).not.toContain(homes[0]);
    expect(JSON.stringify(rows)).not.toContain(key['x-operator-key']);

    leader.child.kill('SIGKILL');
    await leader.exited;
    await untilLeader(standby.url);
    // The old leader's row stays until the forget setting; past a lease without a beat it reads as not seen.
    const after = await waitFor('the takeover in the list', async () => {
      const v = await relays(standby.url, key);
      const fresh = byUrl(v, standby.url);
      return fresh?.role === 'leader' && byUrl(v, leader.url)?.stale ? v : null;
    });
    expect(byUrl(after, standby.url)).toMatchObject({ role: 'leader', epoch: 2, stale: false, self: true });
    expect(byUrl(after, leader.url)).toMatchObject({ role: 'leader', epoch: 1, stale: true });
    expect(byUrl(after, leader.url)!.seen_seconds_ago).toBeGreaterThanOrEqual(after.stale_after_seconds);
    expect(after.relays[0].url).toBe(standby.url); // the newest epoch's leader first
    expect(after.history).toEqual([expect.objectContaining({ epoch: 2, previous_epoch: 1, holder: expect.stringMatching(/^pid \d+ on /) })]);
  });

  it('a relay on the file log answers that there is no pair', async () => {
    const home = tempHome();
    const solo = await startRelayProcess(home, { RELAY_LOG_LEVEL: 'WARNING' });
    running.push(solo);
    const key = { 'x-operator-key': fs.readFileSync(path.join(home, 'relay', 'operator.key'), 'utf8').trim() };
    expect(await relays(solo.url, key)).toMatchObject({ ok: true, supported: false, relays: [], history: [] });
  });
});
