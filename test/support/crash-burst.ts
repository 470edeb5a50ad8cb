import { bearer, Phone } from './harness';
import type { SvcProcess } from './dist';

const register = (url: string, code: string) =>
  fetch(`${url}/pairing/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });

/** What a relay acknowledged before it was killed, by kind. */
export type Acknowledged = {
  /** 200 from /pairing/register, never presented. */
  unusedCodes: Set<string>;
  /** prefix -> token, auth.ok received (and not revoked). */
  paired: Map<string, string>;
  /** prefix -> token, DELETE answered 200. */
  revoked: Map<string, string>;
  /** Requests in flight when the kill landed (> 0: it landed mid-burst). */
  inFlightAtKill: number;
};

/**
 * Issue 2's crash drill: `workers` clients register codes, pair with three in four, revoke one session in
 * three, until at least `pairedBeforeKill` sessions are acknowledged; then SIGKILL. A request in flight at
 * the kill is in no set: it may or may not have become durable, and both outcomes are correct.
 */
export async function burstThenKill(relay: SvcProcess & { url: string }, workers = 12, pairedBeforeKill = 40): Promise<Acknowledged> {
  const ack: Acknowledged = { unusedCodes: new Set(), paired: new Map(), revoked: new Map(), inFlightAtKill: 0 };
  let killed = false;
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
        const res = await track(register(relay.url, code));
        if (res.status !== 200) throw new Error(`register ${code}: ${res.status} ${await res.text()}`);
        if (i % 4 === 3) {
          ack.unusedCodes.add(code);
          continue;
        }
        const phone = await track(Phone.connect(relay.url));
        const ok = await track(phone.auth({ pairing_code: code, device_name: `crash ${w}`, device_id: `crash-${w}-${i}` }));
        if (ok.type !== 'auth.ok') throw new Error(`auth ${code}: ${JSON.stringify(ok.payload)}`);
        const token = ok.payload.session_token as string;
        const prefix = token.slice(0, 8);
        ack.paired.set(prefix, token);
        if (i % 3 === 0) {
          ack.paired.delete(prefix); // in doubt until the DELETE is answered
          const del = await track(fetch(`${relay.url}/sessions/${prefix}`, { method: 'DELETE', headers: bearer(token) }));
          if (del.status !== 200) throw new Error(`revoke ${prefix}: ${del.status}`);
          ack.revoked.set(prefix, token);
        }
        phone.close();
      } catch (err) {
        if (killed) return; // the relay died under this request: its outcome is unknown, not lost
        throw err;
      }
    }
  };
  const running = Array.from({ length: workers }, (_, w) => worker(w));
  const deadline = Date.now() + 20_000;
  while (ack.paired.size < pairedBeforeKill && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  ack.inFlightAtKill = inFlight;
  relay.child.kill('SIGKILL');
  killed = true;
  await relay.exited;
  await Promise.all(running);
  return ack;
}

/** After the restart: every acknowledged session works, no revoked one does, every unused code pairs once. */
export async function expectAcknowledgedSurvived(url: string, ack: Acknowledged): Promise<void> {
  const [someToken] = ack.paired.values();
  const res = await fetch(`${url}/sessions`, { headers: bearer(someToken) });
  expect(res.status).toBe(200);
  const listed = new Set(((await res.json()) as { sessions: Array<{ token_prefix: string }> }).sessions.map((s) => s.token_prefix));
  for (const prefix of ack.paired.keys()) expect(listed).toContain(prefix);
  for (const prefix of ack.revoked.keys()) expect(listed).not.toContain(prefix);
  // Each acknowledged token still works; revoked ones never do (a few: failures feed the rate limiter).
  for (const token of ack.paired.values()) expect((await fetch(`${url}/sessions`, { headers: bearer(token) })).status).toBe(200);
  for (const token of [...ack.revoked.values()].slice(0, 3)) expect((await fetch(`${url}/sessions`, { headers: bearer(token) })).status).toBe(401);
  for (const code of ack.unusedCodes) {
    const phone = await Phone.connect(url);
    const ok = await phone.auth({ pairing_code: code, device_name: 'after crash', device_id: `after-${code}` });
    expect(ok.type).toBe('auth.ok');
    phone.close();
  }
}
