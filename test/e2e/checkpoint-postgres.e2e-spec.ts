import { encodeRecord, GENESIS_HASH, type StoredEvent } from '@svc/events';
import type { Checkpoint } from '@svc/events/checkpoint';
import type { CheckpointMade } from '@svc/console-api';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';
import { dbOf, usePostgres } from '../support/postgres';
import { svc } from '../support/cli';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** Signed checkpoints of a log in PostgreSQL: signed beside the running relay, then the table rewritten and re-chained, then cut short. */
jest.setTimeout(60_000);
const pg = usePostgres();

async function settle(relay: TestRelay): Promise<void> {
  while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
  await relay.loop.drain();
}

describe('checkpoints of a PostgreSQL log', () => {
  let relay: TestRelay;
  let url: string;
  let db: string;
  let env: NodeJS.ProcessEnv;
  let publicKey: string;
  let cp: Checkpoint;
  const cpFile = path.join(tempHome(), 'cp.json');
  const verifyArgs = () => ['relay', 'events', 'verify', '--checkpoint', cpFile, '--public-key', publicKey];

  beforeAll(async () => {
    url = await pg.createDatabase();
    db = dbOf(url);
    relay = await startRelay({ env: { RELAY_EVENT_STORE: url } });
    env = { SVC_HOME: relay.home, RELAY_EVENT_STORE: url };
    await pairPhone(relay).then((p) => p.phone.close());
    await settle(relay);
  });
  afterAll(() => relay?.close());

  it('signs the head of the table while the relay writes it, and the log then extends the checkpoint', async () => {
    publicKey = (JSON.parse((await svc(['relay', 'events', 'public-key', '--json'], env)).stdout) as { public_key: string }).public_key;
    const r = await svc(['relay', 'events', 'checkpoint', '--json-v1', '--out', cpFile], env);
    expect(r.code).toBe(0);
    cp = JSON.parse(fs.readFileSync(cpFile, 'utf8')) as Checkpoint;
    expect(cp).toMatchObject({ seq: relay.loop.lastSeq, hash: relay.loop.lastHash });

    // The console signs the same head with the same key.
    const made = (await (
      await fetch(`${relay.url}/console/api/store/checkpoint`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    ).json()) as CheckpointMade;
    expect(made).toMatchObject({ form: 'c2sp-note', size: cp.seq, key_id: cp.key_id });

    await pairPhone(relay).then((p) => p.phone.close());
    await settle(relay);
    const v = await svc([...verifyArgs(), '--json'], env);
    expect(v.code).toBe(0);
    const j = JSON.parse(v.stdout) as { store: string; checkpoint: { ok: boolean; extended_by: number } };
    expect(j).toMatchObject({ store: 'postgres', checkpoint: { ok: true, extended_by: relay.loop.lastSeq - cp.seq } });
    expect(j.checkpoint.extended_by).toBeGreaterThan(1);
  });

  it('a table rewritten before the checkpoint and re-chained passes verify, and fails the checkpoint naming the seq and both hashes', async () => {
    await relay.close();
    const rows = (await pg.query(db, 'SELECT record FROM svc_relay_events ORDER BY seq')) as Array<{ record: string }>;
    let prev = GENESIS_HASH;
    let atCheckpoint = '';
    for (const row of rows) {
      const e = JSON.parse(row.record) as StoredEvent;
      const data = e.seq === 2 ? { ...e.data, rewritten: true } : e.data;
      const { line, hash } = encodeRecord({ seq: e.seq, id: e.id, at: e.at, type: e.type, actor: e.actor, data, v: e.v, prev });
      await pg.query(db, 'UPDATE svc_relay_events SET record = $1 WHERE seq = $2', [line, e.seq]);
      if (e.seq === cp.seq) atCheckpoint = hash;
      prev = hash;
    }
    expect((await svc(['relay', 'events', 'verify'], env)).code).toBe(0);
    const r = await svc(verifyArgs(), env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `record at seq ${cp.seq} has hash ${atCheckpoint} where the checkpoint says ${cp.hash}: the history was rewritten at or before seq ${cp.seq}`,
    );
  });

  it('a table cut short before the checkpoint fails as truncated', async () => {
    await pg.query(db, 'DELETE FROM svc_relay_events WHERE seq >= $1', [cp.seq]);
    expect((await svc(['relay', 'events', 'verify'], env)).code).toBe(0);
    const r = await svc(verifyArgs(), env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`log shorter than the checkpoint: it ends at seq ${cp.seq - 1}, the checkpoint is of seq ${cp.seq}`);
  });

  it('an empty database is not signed', async () => {
    const empty = await pg.createDatabase();
    const r = await svc(['relay', 'events', 'checkpoint', '--log', empty], { SVC_HOME: tempHome() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is empty: there is no record to sign yet');
  });
});
