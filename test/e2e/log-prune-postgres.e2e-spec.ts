import type { Overview } from '@svc/console-api';
import { listSegments } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { svc } from '../support/cli';
import { nextCode, registerCode, startRelay, tempHome, type TestRelay } from '../support/harness';
import { operatorFetch as fetch } from '../support/http';
import { usePostgres } from '../support/postgres';

/**
 * Retention with a verifiable cut on PostgreSQL (issue 37.4): rows before the cut go (or are written to an
 * archive as one segment file first), deleted in the transaction that appends the log.pruned record; every
 * reader proves the table from the cut on. Days pass on a manual clock.
 */
jest.setTimeout(90_000);
const pg = usePostgres();
const DAY = 86_400;

/** `days` days of pairing-code registrations, one day apart, in a fresh database; the relay stopped. */
async function history(days: number): Promise<{ home: string; url: string; clock: ManualClock }> {
  const url = await pg.createDatabase();
  const clock = new ManualClock('2026-01-01T00:00:00.000Z');
  const relay = await startRelay({ clock, env: { RELAY_EVENT_STORE: url } });
  for (let d = 0; d < days; d++) {
    for (let i = 0; i < 3; i++) expect((await registerCode(relay, nextCode())).status).toBe(200);
    clock.advanceSeconds(DAY);
  }
  await relay.close('history written');
  return { home: relay.home, url, clock };
}

describe('svc relay events prune on a PostgreSQL log', () => {
  let h: Awaited<ReturnType<typeof history>>;
  let env: Record<string, string>;
  let relay: TestRelay | undefined;
  afterEach(async () => {
    await relay?.close('test');
    relay = undefined;
  });
  beforeAll(async () => {
    h = await history(10);
    env = { SVC_HOME: h.home, RELAY_EVENT_STORE: h.url };
  });

  it('a dry run says what would go and changes nothing; --yes archives the rows, records the cut, and every reader proves the log from it', async () => {
    const before = JSON.parse((await svc(['relay', 'events', 'replay', '--json', '--at', h.clock.now().toISOString()], env)).stdout);
    const dry = await svc(['relay', 'events', 'prune', '--before', '2026-01-05T00:00:00Z'], env);
    expect([dry.code, dry.stderr]).toEqual([0, '']);
    expect(dry.stdout).toMatch(/^would prune \d+ records \(\d+ bytes of rows\) up to seq \d+ of 2026-01-04/);
    expect((await svc(['relay', 'events', 'verify', '--json'], env)).stdout).toContain('"lastSeq"');

    const archive = path.join(tempHome(), 'archive');
    const run = await svc(['relay', 'events', 'prune', '--before', '2026-01-05T00:00:00Z', '--archive', archive, '--yes', '--json'], env);
    expect([run.code, run.stderr]).toEqual([0, '']);
    const r = JSON.parse(run.stdout) as { cut: { seq: number; hash: string }; segments: string[]; records: number; checkpoint: string };
    expect(r.records).toBe(r.cut.seq);
    // The archive is one segment of seq 1 to the cut, a chain of its own that ends at the cut's hash.
    expect(listSegments(archive).map((s) => s.file)).toEqual(r.segments);
    const lines = fs.readFileSync(path.join(archive, r.segments[0]), 'utf8').trimEnd().split('\n');
    expect([lines.length, JSON.parse(lines.at(-1)!).hash]).toEqual([r.cut.seq, r.cut.hash]);
    expect((await svc(['relay', 'events', 'verify', '--log', path.join(archive, r.segments[0])])).code).toBe(0);
    expect(JSON.parse(fs.readFileSync(r.checkpoint, 'utf8'))).toMatchObject({ seq: r.cut.seq, hash: r.cut.hash });

    const verified = await svc(['relay', 'events', 'verify'], env);
    expect([verified.code, verified.stderr]).toEqual([0, '']);
    expect(verified.stdout).toContain(`verified from seq ${r.cut.seq + 1} (cut at seq ${r.cut.seq}`);
    const replay = JSON.parse((await svc(['relay', 'events', 'replay', '--json', '--at', h.clock.now().toISOString()], env)).stdout);
    expect(replay.sessions).toEqual(before.sessions);
    expect(replay.from).toMatchObject({ cut: { cutSeq: r.cut.seq } });
    const out = path.join(tempHome(), 'copy.jsonl');
    expect((await svc(['relay', 'events', 'export', '--to', out], env)).code).toBe(0);
    expect((await svc(['relay', 'events', 'verify', '--log', out])).code).toBe(0);

    // Start-up on the pruned table, and the console's monitor says from where it proved it.
    relay = await startRelay({ home: h.home, clock: h.clock, env: { RELAY_EVENT_STORE: h.url } });
    const o = (await (await fetch(`${relay.url}/console/api/overview`)).json()) as Overview;
    expect(o.chain).toMatchObject({ state: 'verified', from_seq: r.cut.seq + 1, cut: { seq: r.cut.seq } });
  });

  it('RELAY_LOG_RETENTION_DAYS prunes the rows inside the relay on its clock, never past the snapshot, and the log verifies', async () => {
    const url = await pg.createDatabase();
    const clock = new ManualClock('2026-01-01T00:00:00.000Z');
    relay = await startRelay({ clock, env: { RELAY_EVENT_STORE: url, RELAY_LOG_RETENTION_DAYS: '5' } });
    for (let d = 0; d < 10; d++) {
      for (let i = 0; i < 3; i++) await registerCode(relay, nextCode());
      clock.advanceSeconds(DAY);
    }
    await relay.sweep();
    const verified = await svc(['relay', 'events', 'verify', '--json'], { SVC_HOME: relay.home, RELAY_EVENT_STORE: url });
    const v = JSON.parse(verified.stdout) as { ok: boolean; cut?: { cutSeq: number; cutAt: string } };
    expect(v).toMatchObject({ ok: true, cut: { cutSeq: expect.any(Number) } });
    expect(Date.parse(v.cut!.cutAt)).toBeLessThan(clock.now().getTime() - 5 * DAY * 1000);
    relay = await relay.restart();
    const o = (await (await fetch(`${relay.url}/console/api/overview`)).json()) as Overview;
    expect(o.chain).toMatchObject({ state: 'verified', from_seq: v.cut!.cutSeq + 1 });
  });
});
