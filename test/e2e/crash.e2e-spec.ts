import { verifyLog } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bearer, Phone, readEvents, tempHome } from '../support/harness';
import { ensureBuilt, startRelayProcess } from '../support/dist';

jest.setTimeout(90_000);
beforeAll(() => ensureBuilt(), 120_000);

const WORKERS = 12;

const register = (url: string, code: string) =>
  fetch(`${url}/pairing/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });

/**
 * Issue 2: "the relay killed with SIGKILL during a burst of pairings restarts with every event it had
 * acknowledged". A real relay process, real HTTP and WebSocket clients, a real kill -9.
 */
describe('crash: SIGKILL during a burst of pairings', () => {
  it('restarts with every acknowledged code, session and revocation; the chain verifies; a torn tail is cut and reported', async () => {
    const home = tempHome();
    const dir = path.join(home, 'relay', 'events');
    const first = await startRelayProcess(home, { RELAY_LOG_LEVEL: 'WARNING' });

    // What the relay acknowledged, by kind. A request in flight at the kill is in neither set: it may
    // or may not have become durable, and both outcomes are correct.
    const unusedCodes = new Set<string>(); // 200 from /pairing/register, never presented
    const paired = new Map<string, string>(); // prefix -> token, auth.ok received
    const revoked = new Map<string, string>(); // prefix -> token, DELETE answered 200
    let killed = false;
    let inFlightAtKill = 0;
    let inFlight = 0;
    const track = async <T>(p: Promise<T>): Promise<T> => {
      inFlight++;
      try {
        return await p;
      } finally {
        inFlight--;
      }
    };

    const worker = async (w: number) => {
      for (let i = 0; !killed; i++) {
        const code = `K${w.toString(36).toUpperCase()}${i.toString(36).toUpperCase().padStart(4, '0')}`;
        try {
          const res = await track(register(first.url, code));
          if (res.status !== 200) throw new Error(`register ${code}: ${res.status} ${await res.text()}`);
          if (i % 4 === 3) {
            unusedCodes.add(code);
            continue;
          }
          const phone = await track(Phone.connect(first.url));
          const ok = await track(phone.auth({ pairing_code: code, device_name: `crash ${w}`, device_id: `crash-${w}-${i}` }));
          if (ok.type !== 'auth.ok') throw new Error(`auth ${code}: ${JSON.stringify(ok.payload)}`);
          const token = ok.payload.session_token as string;
          const prefix = token.slice(0, 8);
          paired.set(prefix, token);
          if (i % 3 === 0) {
            paired.delete(prefix); // in doubt until the DELETE is answered
            const del = await track(fetch(`${first.url}/sessions/${prefix}`, { method: 'DELETE', headers: bearer(token) }));
            if (del.status !== 200) throw new Error(`revoke ${prefix}: ${del.status}`);
            revoked.set(prefix, token);
          }
          phone.close();
        } catch (err) {
          if (killed) return; // the relay died under this request: its outcome is unknown, not lost
          throw err;
        }
      }
    };
    const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));

    const deadline = Date.now() + 20_000;
    while (paired.size < 40 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    inFlightAtKill = inFlight;
    first.child.kill('SIGKILL');
    killed = true;
    expect((await first.exited).signal).toBe('SIGKILL');
    await Promise.all(workers);

    expect(paired.size).toBeGreaterThanOrEqual(20);
    expect(revoked.size).toBeGreaterThanOrEqual(5);
    expect(unusedCodes.size).toBeGreaterThanOrEqual(5);
    expect(inFlightAtKill).toBeGreaterThan(0); // the kill really landed mid-burst

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

      // Every acknowledged session is back, listed through a surviving token; no revoked one is.
      const [someToken] = paired.values();
      const res = await fetch(`${second.url}/sessions`, { headers: bearer(someToken) });
      expect(res.status).toBe(200);
      const listed = new Set(((await res.json()) as { sessions: Array<{ token_prefix: string }> }).sessions.map((s) => s.token_prefix));
      for (const prefix of paired.keys()) expect(listed).toContain(prefix);
      for (const prefix of revoked.keys()) expect(listed).not.toContain(prefix);

      // Each acknowledged token still works; revoked ones never do (a few: failures feed the rate limiter).
      for (const token of paired.values()) expect((await fetch(`${second.url}/sessions`, { headers: bearer(token) })).status).toBe(200);
      for (const token of [...revoked.values()].slice(0, 3))
        expect((await fetch(`${second.url}/sessions`, { headers: bearer(token) })).status).toBe(401);

      // Every acknowledged, unused code survived the crash and still pairs (once).
      for (const code of unusedCodes) {
        const phone = await Phone.connect(second.url);
        const ok = await phone.auth({ pairing_code: code, device_name: 'after crash', device_id: `after-${code}` });
        expect(ok.type).toBe('auth.ok');
        phone.close();
      }
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
    expect(verifyLog(dir).ok).toBe(true);
  });
});
