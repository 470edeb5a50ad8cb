import type { StoreView, VerifyJobView, VerifyStatusAnswer } from '@svc/console-api';
import { BIN } from '../support/dist';
import { pairPhone, startRelay, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';
import { dbOf, usePostgres } from '../support/postgres';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** The Store page on a PostgreSQL log: where it is (never its password), snapshots from the table, the full check. */
jest.setTimeout(60_000);
const pg = usePostgres();

async function get<T>(relay: TestRelay, p: string): Promise<T> {
  const res = await fetch(`${relay.url}/console/api${p}`);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

async function verify(relay: TestRelay): Promise<VerifyJobView> {
  const res = await fetch(`${relay.url}/console/api/store/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(res.status).toBe(202);
  for (let i = 0; i < 500; i++) {
    const { job } = await get<VerifyStatusAnswer>(relay, '/store/verify');
    if (job && job.state !== 'running') return job;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the verify job did not finish');
}

describe('console Store on a PostgreSQL log', () => {
  let relay: TestRelay;
  let db: string;
  beforeAll(async () => {
    const plain = await pg.createDatabase();
    db = dbOf(plain);
    // The server trusts loopback, so a password in the URL is accepted and must never be shown.
    const url = plain.replace('postgres://svc@', 'postgres://svc:hunter2-secret@');
    relay = await startRelay({ env: { RELAY_EVENT_STORE: url }, config: { snapshotEvery: 5 } });
    for (let i = 0; i < 3; i++) await pairPhone(relay).then((p) => p.phone.close());
    // Each close is recorded once the relay sees it: wait for the last one, so the log stands still.
    while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
    await relay.loop.drain();
  });
  afterAll(() => relay?.close());

  it('says the log is in PostgreSQL without the password, with its size, snapshots and commands', async () => {
    const s = await get<StoreView>(relay, '/store');
    expect(s).toMatchObject({ store: 'postgres', last_seq: relay.loop.lastSeq, segments: [] });
    expect(s.location).toContain(`/${db}`);
    expect(JSON.stringify(s)).not.toContain('hunter2');
    expect(s.bytes).toBeGreaterThan(0);
    expect(s.snapshots.length).toBeGreaterThan(0);
    expect(s.snapshots[0]).toMatchObject({ at: Date.parse('2026-03-01T12:00:00Z') / 1000 });
    expect(s.snapshots[0].seq).toBeGreaterThanOrEqual(5);
    expect(s.commands.map((c) => c.command)).toContain(`SVC_HOME=${relay.home} ${BIN} relay events verify`);
    expect(s.commands[0].label).toContain('RELAY_EVENT_STORE');
  });

  it('proves the table from seq 1 with progress in records (no bytes for a table)', async () => {
    const job = await verify(relay);
    expect(job).toMatchObject({ state: 'verified', records: relay.loop.lastSeq, up_to_seq: relay.loop.lastSeq, bytes_done: null, bytes_total: null });
  });

  it('names the first edited row, and the top bar turns broken with it', async () => {
    await pg.query(db, `UPDATE svc_relay_events SET record = replace(record, '"actor":"', '"actor":"x') WHERE seq = 4`);
    const job = await verify(relay);
    expect(job).toMatchObject({ state: 'broken', records: 3, broken: { seq: 4, segment: 'svc_relay_events' } });
    expect((await get<{ chain: unknown }>(relay, '/overview')).chain).toMatchObject({ state: 'broken', broken_at_seq: 4 });
  });
});
