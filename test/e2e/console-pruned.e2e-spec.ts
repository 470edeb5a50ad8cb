import type { ChainVerifyAnswer, Overview, StoreView } from '@svc/console-api';
import { listSegments } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startRelay, type TestRelay } from '../support/harness';
import { operatorFetch as fetch } from '../support/http';
import { prunedHome, SMALL_SEGMENTS, type PrunedHome } from '../support/pruned-home';

/**
 * The console's chain monitor and its full check over a pruned log (issue 37.4): the log starts at a cut its
 * own log.pruned record names, so both prove it from the record after the cut and say so; a log whose head
 * is gone without a recorded cut is still broken.
 */
jest.setTimeout(60_000);

describe('console chain status of a pruned log', () => {
  let h: PrunedHome;
  let relay: TestRelay | undefined;
  beforeAll(async () => {
    h = await prunedHome();
  });
  afterEach(async () => {
    await relay?.close('test');
    relay = undefined;
  });

  it('the overview, the Store page and a full check say verified from the cut, naming it', async () => {
    relay = await startRelay({ home: h.home, clock: h.clock, config: SMALL_SEGMENTS });
    const from = { from_seq: h.cut.seq + 1, cut: { seq: h.cut.seq, at: expect.stringMatching(/^2026-01-0[1-5]T/) } };
    const o = (await (await fetch(`${relay.url}/console/api/overview`)).json()) as Overview;
    expect(o.chain).toMatchObject({ state: 'verified', verified_to_seq: relay.loop.lastSeq, ...from });
    const store = (await (await fetch(`${relay.url}/console/api/store`)).json()) as StoreView;
    expect(store.chain).toMatchObject({ state: 'verified', ...from });
    const full = (await (
      await fetch(`${relay.url}/console/api/chain/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    ).json()) as ChainVerifyAnswer;
    expect(full).toMatchObject({ ok: true, chain: { state: 'verified', ...from } });
    const job = (await (await fetch(`${relay.url}/console/api/store/verify`)).json()) as { job: Record<string, unknown> };
    expect(job.job).toMatchObject({ state: 'verified', from_seq: h.cut.seq + 1, cut: from.cut });
  });

  it('a log whose head is gone without a recorded cut there is broken for the full check, in a sentence', async () => {
    const home = fs.mkdtempSync(path.join(path.dirname(h.home), 'headless-'));
    fs.cpSync(h.home, home, { recursive: true });
    relay = await startRelay({ home, clock: h.clock, config: SMALL_SEGMENTS });
    const events = path.join(home, 'relay', 'events');
    const [first, second] = listSegments(events);
    expect(second).toBeDefined();
    fs.rmSync(path.join(events, first.file));
    const full = await fetch(`${relay.url}/console/api/chain/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const body = (await full.json()) as ChainVerifyAnswer;
    expect(body.chain).toMatchObject({ state: 'broken', segment: second.file });
    expect(body.chain.state === 'broken' && body.chain.reason).toContain('no recorded cut says they were pruned');
    const o = (await (await fetch(`${relay.url}/console/api/overview`)).json()) as Overview;
    expect(o.chain).toMatchObject({ state: 'broken' });
  });
});
