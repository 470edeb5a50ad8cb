import { PgEventStore, PgLogSource, type StoredRelayEvent } from '@svc/events';
import { PgChainMonitor, PgEventHistory } from '../../apps/relay/src/console/pg-console-log';
import { tempHome } from '../support/harness';
import { ensureBuilt, startRelayProcess } from '../support/dist';
import { dbOf, usePostgres } from '../support/postgres';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** The operator console reads a PostgreSQL log as it reads the file log: history, chain check, size. */
jest.setTimeout(60_000);

beforeAll(() => ensureBuilt(), 120_000);
const pg = usePostgres();

const seqs = (es: Array<{ seq: number }>) => es.map((e) => e.seq);

async function writeLog(n: number): Promise<{ url: string; durable: StoredRelayEvent[] }> {
  const url = await pg.createDatabase();
  const durable: StoredRelayEvent[] = [];
  const store = new PgEventStore({ url, onDurable: (b) => durable.push(...(b as StoredRelayEvent[])) });
  await store.open({ fromSeq: 1, onEvent: () => undefined });
  for (let i = 1; i <= n; i++) {
    const prefix = `dev${String(i % 3).padStart(5, '0')}`;
    await store.append(
      [{ type: i % 2 ? 'session.seen' : 'phone.connected', data: { tokenPrefix: prefix, ip: '127.0.0.1', via: 'ws', n: i } }],
      new Date(Date.UTC(2026, 2, 1, 12, 0, i)).toISOString(),
      'system',
    ).durable;
  }
  await store.close();
  return { url, durable };
}

describe('PgEventHistory and PgChainMonitor over a real database', () => {
  let url: string;
  let source: PgLogSource;
  beforeAll(async () => {
    ({ url } = await writeLog(120));
    source = new PgLogSource(url);
  });
  afterAll(() => source.close());

  it('pages newest first across the ring and the table, with no gap or repeat, and never past the durable seq', async () => {
    const h = new PgEventHistory(source, () => 110, 10);
    await h.seed();
    expect(seqs(h.newest(3))).toEqual([110, 109, 108]);
    const all: number[] = [];
    let before: number | undefined;
    for (;;) {
      const page = await h.before(before, 7);
      all.push(...seqs(page.events));
      if (!page.more) break;
      before = Math.min(...seqs(page.events));
    }
    expect(all).toEqual(Array.from({ length: 110 }, (_, i) => 110 - i));
  });

  it('replays oldest first from any seq across the table and the ring, filtered by type', async () => {
    const h = new PgEventHistory(source, () => 120, 10);
    await h.seed();
    const all: number[] = [];
    let after = 0;
    for (;;) {
      const page = await h.after(after, 9, { types: ['phone.'] });
      all.push(...seqs(page.events));
      if (!page.more) break;
      after = Math.max(...seqs(page.events));
    }
    expect(all).toEqual(Array.from({ length: 60 }, (_, i) => 2 * (i + 1)));
  });

  it('the chain check is incremental, and a full re-check finds an edited record or column', async () => {
    const { url: u2 } = await writeLog(30);
    const s2 = new PgLogSource(u2);
    let durable = 20;
    const m = new PgChainMonitor(
      s2,
      () => durable,
      () => 0,
    );
    expect(await m.check()).toMatchObject({ state: 'verified', verified_to_seq: 20 });
    durable = 30;
    expect(await m.check()).toMatchObject({ state: 'verified', verified_to_seq: 30 });
    await pg.query(dbOf(u2), `UPDATE svc_relay_events SET actor = 'operator' WHERE seq = 7`);
    expect(await m.check()).toMatchObject({ state: 'verified', verified_to_seq: 30 }); // incremental: 7 was proven
    m.reset();
    expect(await m.check(true)).toMatchObject({ state: 'broken', broken_at_seq: 7, reason: 'the actor column does not match the record' });
    await s2.close();
  });
});

describe('the console of a relay on PostgreSQL', () => {
  it('overview names the store and its size, the chain is verified to the last seq, events page back after a restart', async () => {
    const url = await pg.createDatabase();
    const home = tempHome();
    const first = await startRelayProcess(home, { RELAY_EVENT_STORE: url, RELAY_PAIRING_CODE: 'CON123' });
    first.child.kill('SIGTERM');
    await first.exited;
    const relay = await startRelayProcess(home, { RELAY_EVENT_STORE: url });
    try {
      const api = `${relay.url}/console/api`;
      const o = (await (await fetch(`${api}/overview`)).json()) as {
        log: { store: string; bytes: number; last_seq: number };
        chain: { state: string; verified_to_seq: number };
      };
      expect(o.log.store).toBe('postgres');
      expect(o.log.bytes).toBeGreaterThan(0);
      expect(o.chain).toMatchObject({ state: 'verified', verified_to_seq: o.log.last_seq });
      const events = (await (await fetch(`${api}/events?limit=100`)).json()) as { events: Array<{ seq: number; type: string }> };
      const types = events.events.map((e) => e.type);
      expect(types.filter((t) => t === 'relay.started')).toHaveLength(2);
      expect(types).toContain('relay.stopping');
      expect(seqs(events.events)).toEqual(Array.from({ length: o.log.last_seq }, (_, i) => o.log.last_seq - i));
      const verify = (await (
        await fetch(`${api}/chain/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      ).json()) as {
        chain: { state: string };
      };
      expect(verify.chain.state).toBe('verified');
      const metrics = await (await fetch(`${relay.url}/metrics`)).text();
      expect(metrics).toMatch(new RegExp(`^svc_event_log_last_seq\\{store="postgres"\\} ${o.log.last_seq}$`, 'm'));
    } finally {
      relay.child.kill('SIGTERM');
      await relay.exited;
    }
  });
});

describe('a reader whose connection is lost', () => {
  it('connects again for the next query (the console keeps working after the database drops its session)', async () => {
    const { url } = await writeLog(5);
    const source = new PgLogSource(url);
    const h = new PgEventHistory(source, () => 5, 2);
    await h.seed();
    await pg.query(
      dbOf(url),
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'svc-relay reader%'`,
      [dbOf(url)],
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(seqs((await h.before(undefined, 10)).events)).toEqual([5, 4, 3, 2, 1]);
    await source.close();
  });
});
