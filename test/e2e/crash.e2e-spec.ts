import { verifyLog } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { burstThenKill, expectAcknowledgedSurvived } from '../support/crash-burst';
import { readEvents, tempHome } from '../support/harness';
import { ensureBuilt, startRelayProcess } from '../support/dist';

jest.setTimeout(90_000);
beforeAll(() => ensureBuilt(), 120_000);

/**
 * Issue 2: "the relay killed with SIGKILL during a burst of pairings restarts with every event it had
 * acknowledged". A real relay process, real HTTP and WebSocket clients, a real kill -9.
 */
describe('crash: SIGKILL during a burst of pairings', () => {
  it('restarts with every acknowledged code, session and revocation; the chain verifies; a torn tail is cut and reported', async () => {
    const home = tempHome();
    const dir = path.join(home, 'relay', 'events');
    const first = await startRelayProcess(home, { RELAY_LOG_LEVEL: 'WARNING' });
    const ack = await burstThenKill(first);
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(ack.paired.size).toBeGreaterThanOrEqual(20);
    expect(ack.revoked.size).toBeGreaterThanOrEqual(5);
    expect(ack.unusedCodes.size).toBeGreaterThanOrEqual(5);
    expect(ack.inFlightAtKill).toBeGreaterThan(0); // the kill really landed mid-burst

    // The log as the kill left it: every record intact and chained (at most a torn last line).
    const afterKill = verifyLog(dir);
    expect(afterKill.ok).toBe(true);

    // Simulate the worst case a power cut can leave: half a record at the end.
    const segment = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
      .at(-1)!;
    const torn = `{"seq":${afterKill.ok ? afterKill.lastSeq + 1 : 0},"id":"00000000-0000-4000-8000-000000000000","at":"2026-01-01T00:00:00.000Z","type":"session.rev`;
    fs.appendFileSync(path.join(dir, segment), torn);
    expect(verifyLog(dir)).toMatchObject({ ok: true, tornTailBytes: torn.length });

    const second = await startRelayProcess(home, { RELAY_LOG_LEVEL: 'WARNING' });
    try {
      expect(second.stderr()).toContain(`cut a torn last line of ${torn.length} bytes`);
      // ...and so does the log (pino writes stdout asynchronously: give the line a moment to arrive).
      for (let i = 0; i < 100 && !second.stdout().includes('cut a torn last line'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(second.stdout()).toContain('cut a torn last line');
      const started = readEvents(home).filter((e) => e.type === 'relay.started');
      expect(started).toHaveLength(2);
      expect(started[1].data.recovered).toEqual({ segment, droppedBytes: torn.length });
      const verified = verifyLog(dir);
      expect(verified).toMatchObject({ ok: true, tornTailBytes: 0 });

      // Every acknowledged session, revocation and unused code is back.
      await expectAcknowledgedSurvived(second.url, ack);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
    expect(verifyLog(dir).ok).toBe(true);
  });
});
