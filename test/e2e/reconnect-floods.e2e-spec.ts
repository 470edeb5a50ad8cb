import type { DiskSpace } from '../../apps/relay/src/common/disk-guard';
import { nextCode, Phone, readEvents, registerCode, startRelay, type Frame, type TestRelay } from '../support/harness';

/**
 * The `system/auth` handshake under attack (issue 34, findings 3 and 6), over real sockets with a manual
 * clock: a paired device that reconnects in a loop, renewals racing with one refresh token, and both while
 * the disk guard is low. Every refusal is an `auth.fail` with a code (never `system/error internal`, never a
 * socket left waiting for its 30 s deadline), and a reconnect loop writes a bounded number of events a minute.
 */
jest.setTimeout(60_000);

const MiB = 1024 * 1024;
const HOUR = 3600;
/** The reconnect budget this suite runs with (RELAY_RECONNECT_BURST, RELAY_RECONNECTS_PER_MINUTE). */
const BURST = 10;
const PER_MINUTE = 4;

/**
 * The app's test for an `auth.fail` that keeps its session (app auth/AuthManager.kt:171-179,
 * shouldPreservePairedSessionOnAuthFail, called from handleAuthFail at :1311): any other reason moves it to
 * AuthState.Failed ("Needs re-pair", :1319) and stops its reconnects (hasPairContext, :572-575).
 */
const appKeepsSession = (reason: string) => {
  const lower = reason.toLowerCase();
  return lower.includes('timeout') && (lower.includes('auth') || lower.includes('authentication'));
};

async function pair(relay: TestRelay, deviceId: string, terms: Record<string, unknown> = {}) {
  const code = nextCode();
  expect((await registerCode(relay, code, terms)).status).toBe(200);
  const phone = await Phone.connect(relay.url);
  const ok = await phone.auth({ pairing_code: code, device_name: 'Pixel', device_id: deviceId });
  expect(ok.type).toBe('auth.ok');
  return { phone, token: ok.payload.session_token as string, refresh: ok.payload.refresh_token as string };
}

/** The first `system` frame a socket gets after its auth frame: auth.ok, auth.fail, or (the bug) an error. */
const answer = (p: Phone): Promise<Frame> => p.next((f) => f.channel === 'system', 15_000);

/** A socket is settled when it is closed or answers a ping: never left waiting for the auth deadline. */
async function settled(p: Phone): Promise<'closed' | 'open'> {
  if (p.closeCode === null) p.send('system', 'ping', { ts: 1 }, 'settled');
  const pong = p.next((f) => f.type === 'pong', 15_000).then(() => 'open' as const);
  return Promise.race([p.closed.then(() => 'closed' as const), pong]);
}

describe('system/auth: renewals that race, reconnect loops, a low disk', () => {
  let relay: TestRelay;
  let space: DiskSpace = { freeBytes: 50_000 * MiB, totalBytes: 100_000 * MiB };
  const setFree = async (freeBytes: number) => {
    space = { ...space, freeBytes };
    await relay.disk.refresh();
  };
  beforeEach(async () => {
    space = { freeBytes: 50_000 * MiB, totalBytes: 100_000 * MiB };
    relay = await startRelay({
      diskSpace: async () => space,
      env: { RELAY_RECONNECT_BURST: String(BURST), RELAY_RECONNECTS_PER_MINUTE: String(PER_MINUTE) },
    });
  });
  afterEach(() => relay.close('test done'));

  it('two renewals with one refresh token at once, 20 times: each socket ends in auth.ok or auth.fail with a code, none in system/error, none left waiting', async () => {
    for (let round = 0; round < 20; round++) {
      const deviceId = `race-${round}`;
      const { phone, token, refresh } = await pair(relay, deviceId, { ttl_seconds: HOUR });
      phone.close();
      // The session ends; the phone comes back with what it stored (its old session token and refresh token).
      relay.clock.advance(2 * HOUR * 1000);
      const [a, b] = await Promise.all([Phone.connect(relay.url), Phone.connect(relay.url)]);
      const frame = { session_token: token, refresh_token: refresh, device_id: deviceId, device_name: 'Pixel' };
      a.send('system', 'auth', frame, 'a');
      b.send('system', 'auth', frame, 'b');
      const answers = await Promise.all([answer(a), answer(b)]);
      for (const f of answers) {
        expect([round, f.type]).toEqual([round, expect.stringMatching(/^auth\.(ok|fail)$/)]);
        if (f.type === 'auth.fail') expect(f.payload.code).toEqual(expect.any(String));
      }
      // A copy was used: whoever lost is told why; the winner (if any) is signed out with the device.
      expect(answers.some((f) => f.type === 'auth.fail' && f.payload.code === 'refresh_reuse')).toBe(true);
      for (const p of [a, b]) {
        expect(await settled(p)).toBe('closed');
        expect(p.frames.filter((f) => f.type === 'error')).toEqual([]);
      }
    }
    expect(relay.logs.join('')).not.toContain('phone frame handler failed');
  });

  it('a renewal while the disk is low is auth.fail relay.disk_low with retry_after (the app keeps its session); nothing is half-written', async () => {
    const { phone, token, refresh } = await pair(relay, 'low-renew', { ttl_seconds: HOUR });
    phone.close();
    await phone.closed;
    relay.clock.advance(2 * HOUR * 1000);
    await relay.sweep();
    await relay.loop.drain();
    const seq = relay.loop.lastSeq;
    await setFree(10 * MiB);
    const back = await Phone.connect(relay.url);
    back.send('system', 'auth', { session_token: token, refresh_token: refresh, device_id: 'low-renew' }, 'renew');
    const f = await answer(back);
    expect(f).toMatchObject({ type: 'auth.fail', payload: { code: 'relay.disk_low', retry_after: expect.any(Number) } });
    expect(appKeepsSession(f.payload.reason as string)).toBe(true);
    expect(await settled(back)).toBe('closed');
    expect(back.closeCode).toBe(1013);
    await relay.loop.drain();
    expect(readEvents(relay.home).filter((e) => e.seq > seq)).toEqual([]);
    // Space returns: the same credentials renew (the refresh token was not rotated by the refused attempt).
    await setFree(2_000 * MiB);
    const again = await Phone.connect(relay.url);
    expect((await again.auth({ session_token: token, refresh_token: refresh, device_id: 'low-renew' })).type).toBe('auth.ok');
    again.close();
  });
});
