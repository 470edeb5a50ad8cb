import { ReadModels } from '@svc/domain';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PgLogSource, unsealPersonal } from '@svc/events';
import { PgKeyStore } from '../../apps/relay/src/personal/pg-key-store';
import { loadKek } from '../../apps/relay/src/standby/shared-secrets';
import { pairPhone, startRelay, type TestRelay } from '../support/harness';
import { call, operatorFetch } from '../support/http';
import { A_SECRETS, P_SECRET, personalTraffic, Q_TEXT, queuedThenDelivered } from '../support/personal-keys';
import { dbOf, usePostgres } from '../support/postgres';
import { Screen, eventually } from '../support/terminal-screen';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** Crypto-shredding on a PostgreSQL log: keys in a table beside the events, no plain text in any row. */
jest.setTimeout(60_000);
const pg = usePostgres();

describe('personal content on a PostgreSQL log', () => {
  let relay: TestRelay;
  afterEach(() => relay?.close());

  it('no plain text in the database; forgetting deletes the keys (vacuumed), keeps the chain, and replay still equals the relay', async () => {
    const url = await pg.createDatabase();
    const db = dbOf(url);
    relay = await startRelay({ env: { RELAY_EVENT_STORE: url, PHONE_ENABLED: '1' }, config: { snapshotEvery: 3 } });
    const { a, aPrefix, b, bPrefix } = await personalTraffic(relay);
    await relay.loop.drain();
    await new Promise((r) => setTimeout(r, 200)); // a snapshot write in flight
    const dump = async () => {
      const rows = [
        ...(await pg.query(db, 'SELECT record AS t FROM svc_relay_events')),
        ...(await pg.query(db, 'SELECT body || mac AS t FROM svc_relay_snapshots')),
        ...(await pg.query(db, "SELECT id || encode(key, 'hex') AS t FROM svc_relay_personal_keys")),
      ];
      return rows.map((r) => String(r.t)).join('\n');
    };
    const before = await dump();
    for (const s of [...A_SECRETS, 'charlie stays']) expect(before).not.toContain(s);
    expect((await pg.query(db, 'SELECT count(*)::int AS n FROM svc_relay_personal_keys'))[0].n).toBeGreaterThanOrEqual(2);

    const forgot = await call(relay, 'POST', '/console/api/personal-data/forget', { device: aPrefix });
    expect(forgot.body).toMatchObject({ ok: true, dry_run: false });
    const ids = (await pg.query(db, "SELECT record::jsonb->'data'->'keys' AS k FROM svc_relay_events WHERE type = 'personal.forgotten'"))[0]
      .k as string[];
    expect(ids.length).toBe(forgot.body.keys);
    const left = (await pg.query(db, 'SELECT id FROM svc_relay_personal_keys')).map((r) => String(r.id));
    expect(left.every((id) => id.startsWith(`${bPrefix}:`))).toBe(true);
    expect(left.length).toBeGreaterThan(0);
    // Snapshots written before the forgetting are gone: at most the one written after it.
    expect((await pg.query(db, 'SELECT count(*)::int AS n FROM svc_relay_snapshots'))[0].n).toBeLessThanOrEqual(1);

    // The chain verifies, and a replay with the keys left equals the relay's state.
    const source = new PgLogSource(url);
    const keys = await PgKeyStore.open(url, { where: 'the home', load: () => loadKek(path.join(relay.home, 'relay'), false) });
    const models = new ReadModels();
    try {
      const report = await source.walk({ onEvent: (e) => models.apply(unsealPersonal(e, (id) => keys.get(id))) });
      expect(report.lastSeq).toBe(relay.loop.lastSeq);
    } finally {
      await keys.close();
      await source.close();
    }
    expect(models.phoneThreads.snapshot()).toEqual(relay.loop.models.phoneThreads.snapshot());
    expect(models.notifications.snapshot()).toEqual(relay.loop.models.notifications.snapshot());
    expect(models.notifications.recent().find((n) => n.tokenPrefix === bPrefix)?.text).toBe('charlie stays');
    expect(models.notifications.recent().find((n) => n.tokenPrefix === aPrefix)).toMatchObject({ text: null, forgotten: true });
    a.close();
    b.close();
  });

  it("a message queued for no phone and delivered to P goes with P's forgetting; the next one for no phone had a fresh host key row", async () => {
    const url = await pg.createDatabase();
    const db = dbOf(url);
    relay = await startRelay({ env: { RELAY_EVENT_STORE: url, PHONE_ENABLED: '1' } });
    const { p, q, forP, forQ } = await queuedThenDelivered(relay);
    const hostKeys = async () =>
      (await pg.query(db, "SELECT id FROM svc_relay_personal_keys WHERE id LIKE 'host:%' ORDER BY created_at")).map((r) => String(r.id));
    expect(await hostKeys()).toHaveLength(2);
    const forgot = await call(relay, 'POST', '/console/api/personal-data/forget', { device: p.prefix });
    expect(forgot.body).toMatchObject({ ok: true, keys: 1 });
    expect(await hostKeys()).toHaveLength(1);
    const threads = JSON.stringify((await call(relay, 'GET', '/phone/threads/ops')).body);
    expect(threads).not.toContain(P_SECRET);
    expect(threads).toContain(Q_TEXT);
    p.phone.close();
    q.phone.close();
    relay = await relay.restart();
    expect(relay.loop.models.phoneThreads.message(forP)).toMatchObject({ text: '', forgotten: true });
    expect(relay.loop.models.phoneThreads.message(forQ)).toMatchObject({ text: Q_TEXT });
  });

  it("a terminal recording is sealed under its device's key row and goes, key and file, when the device is forgotten", async () => {
    const url = await pg.createDatabase();
    const db = dbOf(url);
    relay = await startRelay({
      env: { RELAY_EVENT_STORE: url },
      config: {
        terminalShell: path.join(__dirname, '../fixtures/bash-norc'),
        terminalRecording: { enabled: true, input: false, maxBytes: 64 * 1024 * 1024, totalBytes: 1024 * 1024 * 1024 },
      },
    });
    const { phone, prefix } = await pairPhone(relay);
    const screen = new Screen(phone);
    phone.send('terminal', 'terminal.attach', { cols: 80, rows: 24 }, 'a');
    await phone.next((f) => f.id === 'a');
    phone.send('terminal', 'terminal.input', { data: 'echo "pg-$((40+2))-SECRETVALUE"\r' });
    await screen.waitFor(/pg-42-SECRETVALUE/);
    phone.send('terminal', 'terminal.kill', {}, 'k');
    await phone.next((f) => f.id === 'k');
    const [saved] = relay.loop.models.terminalRecordings.list();
    const id = saved.recordingId;
    const rows = (await pg.query(db, 'SELECT id FROM svc_relay_personal_keys')).map((r) => String(r.id));
    expect(rows).toContain(saved.sealedWith);
    const file = path.join(relay.home, 'relay', 'recordings', `${id}.cast`);
    expect(fs.readFileSync(file, 'latin1')).not.toContain('pg-42-SECRETVALUE');
    expect(await (await fetch(`${relay.url}/console/api/terminal/recordings/${id}`)).text()).toContain('pg-42-SECRETVALUE');
    await call(relay, 'POST', '/console/api/personal-data/forget', { device: prefix });
    await eventually(() => relay.loop.models.terminalRecordings.wasForgotten(id), 10_000);
    expect(fs.existsSync(file)).toBe(false);
    expect((await pg.query(db, 'SELECT id FROM svc_relay_personal_keys')).map((r) => String(r.id))).not.toContain(saved.sealedWith);
    phone.close();
  });
});
