import * as fs from 'node:fs';
import * as path from 'node:path';
import { pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { usePostgres } from '../support/postgres';
import { svc } from '../support/cli';

/**
 * The transparency log of a PostgreSQL log (issue 39.1): the `record` column is the line the file log
 * holds, so the same log gives the same tree in both stores: a relay on PostgreSQL serves a checkpoint,
 * its export to a file log has the same root, and a proof from either verifies against it.
 */
jest.setTimeout(60_000);
const pg = usePostgres();

describe('the Merkle tree of a PostgreSQL log', () => {
  let relay: TestRelay;
  let url: string;
  beforeAll(async () => {
    url = await pg.createDatabase();
    relay = await startRelay({ env: { RELAY_EVENT_STORE: url } });
    (await pairPhone(relay)).phone.close();
    while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
    await relay.loop.drain();
  });
  afterAll(() => relay?.close());

  it('gives the same tree as its export to a file log, and both prove the same record', async () => {
    const env = { SVC_HOME: relay.home, RELAY_EVENT_STORE: url };
    const served = (await (await fetch(`${relay.url}/log/checkpoint`)).text()).split('\n').slice(0, 3);
    const fromPg = (await svc(['relay', 'events', 'checkpoint'], env)).stdout.split('\n').slice(0, 3);
    const copy = path.join(tempHome(), 'copy.jsonl');
    expect((await svc(['relay', 'events', 'export', '--to', copy], env)).code).toBe(0);
    const size = Number(served[1]);
    const fromFile = (await svc(['relay', 'events', 'checkpoint', '--log', copy], env)).stdout.split('\n').slice(0, 3);
    // The relay is idle: the served tree, the table's and the file copy's are one tree.
    expect(fromPg).toEqual(served);
    expect(fromFile).toEqual(served);
    const a = JSON.parse((await svc(['relay', 'events', 'proof', '--seq', '2', '--size', String(size)], env)).stdout) as Record<string, unknown>;
    const b = JSON.parse((await svc(['relay', 'events', 'proof', '--seq', '2', '--size', String(size), '--log', copy], env)).stdout) as Record<
      string,
      unknown
    >;
    expect(b).toEqual(a);
    expect(a.record).toBe(fs.readFileSync(copy, 'utf8').split('\n')[1]);
  });
});
