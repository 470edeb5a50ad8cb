import { startRelay, type TestRelay } from '../support/harness';
import { startSim } from '../support/bridge';
import { call } from '../support/http';
import { mcpConnect, textOf } from '../support/mcp';
import { dbOf, usePostgres } from '../support/postgres';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/** Named secrets on a PostgreSQL log (issue 40, item 3): sealed in the rows, their keys in the key table, forgetting deletes the key row. */
jest.setTimeout(60_000);
const pg = usePostgres();

describe('secrets on a PostgreSQL log', () => {
  let relay: TestRelay;
  let phone: PhoneSim | undefined;
  afterEach(async () => {
    phone?.stop();
    await relay?.close();
  });

  it('no value in any row; typed by name; forgetting deletes its key row and a restart keeps the rest', async () => {
    const url = await pg.createDatabase();
    const db = dbOf(url);
    relay = await startRelay({ env: { RELAY_EVENT_STORE: url }, config: { snapshotEvery: 3 } });
    phone = await startSim(relay, { deviceName: 'PG Phone' });
    for (const [name, value] of [
      ['door', 'Kx-7731-door'],
      ['vpn', 'Vpn-secret-0099'],
    ])
      expect((await call(relay, 'POST', '/console/api/secrets', { name, value })).status).toBe(200);
    const { client } = await mcpConnect(relay, phone.token!);
    const r = await client.callTool({ name: 'android_type_secret', arguments: { name: 'door', clearFirst: true } });
    await client.close();
    expect(JSON.parse(textOf(r))).toEqual({ ok: true, typed: 'the secret "door"' });
    expect(phone.state.focusedText).toBe('Kx-7731-door');
    await relay.loop.drain();
    const dump = async () =>
      [
        ...(await pg.query(db, 'SELECT record AS t FROM svc_relay_events')),
        ...(await pg.query(db, 'SELECT body || mac AS t FROM svc_relay_snapshots')),
        ...(await pg.query(db, "SELECT id || encode(key, 'hex') AS t FROM svc_relay_personal_keys")),
      ]
        .map((row) => String(row.t))
        .join('\n');
    const all = await dump();
    // The dump holds what it should: the snapshots (the read models, secrets included) as well as the records.
    expect((await pg.query(db, 'SELECT count(*)::int AS n FROM svc_relay_snapshots'))[0].n).toBeGreaterThan(0);
    expect(all).toContain('secret-door:');
    for (const v of ['Kx-7731-door', 'Vpn-secret-0099']) expect(all).not.toContain(v);
    const keyRows = async () => (await pg.query(db, "SELECT id FROM svc_relay_personal_keys WHERE id LIKE 'secret-%'")).map((x) => String(x.id));
    expect((await keyRows()).map((id) => id.split(':')[0]).sort()).toEqual(['secret-door', 'secret-vpn']);

    expect((await call(relay, 'POST', '/console/api/secrets/forget', { name: 'door' })).body).toMatchObject({ ok: true, keys: 1 });
    expect((await keyRows()).map((id) => id.split(':')[0])).toEqual(['secret-vpn']);
    phone.stop();
    phone = undefined;
    relay = await relay.restart();
    expect(relay.loop.models.secrets.get('door')).toBeUndefined();
    expect(relay.loop.models.secrets.get('vpn')?.value).toBe('Vpn-secret-0099');
  });
});
