import * as fs from 'node:fs';
import type { DiskSpace } from '../../apps/relay/src/common/loop/disk-guard';
import { PhoneHub } from '../../apps/relay/src/phone-socket/phone-hub.service';
import { nextCode, Phone, readEvents, registerCode, startRelay, type Frame, type TestRelay } from '../support/harness';

// fdatasync stays real, but a test can hold one to act between a handshake's decision and its durability.
const realFs = jest.requireActual<typeof import('node:fs')>('node:fs');
jest.mock('node:fs', () => {
  const real = jest.requireActual<typeof import('node:fs')>('node:fs');
  return { ...real, fdatasync: jest.fn((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => real.fdatasync(fd, cb)) };
});

/** Holds the next fdatasync until the returned release is called; resolves `held` once it is being held. */
function holdNextSync(): { held: Promise<void>; release: () => void } {
  let release!: () => void;
  let holding!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const held = new Promise<void>((r) => (holding = r));
  (fs.fdatasync as unknown as jest.Mock).mockImplementationOnce((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
    holding();
    void gate.then(() => realFs.fdatasync(fd, cb));
  });
  return { held, release };
}

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

/** The close code of a socket that must close promptly (a socket left waiting for its 30 s auth deadline fails). */
function closedWithin(p: Phone, ms = 15_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`socket still open after ${ms} ms; got ${JSON.stringify(p.frames)}`)), ms);
    void p.closed.then((code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Waits (generously) until the relay has recorded every disconnect: `online` sockets are left in its connections model. */
async function online(relay: TestRelay, n: number): Promise<void> {
  for (let i = 0; i < 1000 && relay.loop.models.connections.count() !== n; i++) await new Promise((r) => setTimeout(r, 10));
  expect(relay.loop.models.connections.count()).toBe(n);
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
        expect(await closedWithin(p)).toBeGreaterThanOrEqual(4000);
        expect(p.frames.filter((f) => f.type === 'error')).toEqual([]);
      }
    }
    expect(relay.logs.join('')).not.toContain('phone frame handler failed');
  });

  it('a renewal while the disk is low is auth.fail relay.disk_low with retry_after (the app keeps its session); nothing is half-written', async () => {
    const { phone, token, refresh } = await pair(relay, 'low-renew', { ttl_seconds: HOUR });
    phone.close();
    await online(relay, 0);
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
    expect(await closedWithin(back)).toBe(1013);
    await relay.loop.drain();
    expect(readEvents(relay.home).filter((e) => e.seq > seq)).toEqual([]);
    // Space returns: the same credentials renew (the refresh token was not rotated by the refused attempt).
    await setFree(2_000 * MiB);
    const again = await Phone.connect(relay.url);
    expect((await again.auth({ session_token: token, refresh_token: refresh, device_id: 'low-renew' })).type).toBe('auth.ok');
    again.close();
  });

  it('a reconnect loop writes a bounded number of events a minute: past the reconnect budget, auth.fail relay.reconnect_budget with retry_after, nothing written', async () => {
    const { phone, token, refresh } = await pair(relay, 'flapper');
    phone.close();
    await online(relay, 0);
    // What the app sends on every reconnect (AuthManager.kt:866-893): its session token, refresh token, identity.
    const frame = { session_token: token, refresh_token: refresh, device_id: 'flapper', device_name: 'Pixel' };
    const loop = async (n: number) => {
      const outcomes: Frame[] = [];
      for (let i = 0; i < n; i++) {
        const p = await Phone.connect(relay.url);
        p.send('system', 'auth', frame, `r${i}`);
        const f = await answer(p);
        outcomes.push(f);
        if (f.type === 'auth.fail') expect(await closedWithin(p)).toBe(1013);
        else {
          p.close();
          await p.closed;
        }
      }
      await online(relay, 0);
      return outcomes;
    };
    const seq = relay.loop.lastSeq;
    const first = await loop(3 * BURST);
    const ok = first.filter((f) => f.type === 'auth.ok').length;
    expect(ok).toBe(BURST);
    const refused = first.filter((f) => f.type === 'auth.fail');
    expect(refused).toHaveLength(2 * BURST);
    for (const f of refused) {
      expect(f.payload).toMatchObject({ code: 'relay.reconnect_budget', retry_after: expect.any(Number) });
      expect(f.payload.retry_after as number).toBeGreaterThan(0);
      expect(appKeepsSession(f.payload.reason as string)).toBe(true);
    }
    const written = readEvents(relay.home).filter((e) => e.seq > seq);
    // A connect and a disconnect per admitted reconnect; the refused ones write nothing (before: 3 each).
    expect(written.filter((e) => e.type === 'phone.connected')).toHaveLength(BURST);
    expect(written.length).toBeLessThanOrEqual(2 * BURST + 1);
    // Refusals are not failed credentials: the address is not blocked.
    expect(written.filter((e) => e.type === 'auth.failed')).toEqual([]);

    // A minute later: as many reconnects again, of which the minute's refill gets through.
    relay.clock.advance(61_000);
    const seq2 = relay.loop.lastSeq;
    const second = await loop(3 * BURST);
    expect(second.filter((f) => f.type === 'auth.ok')).toHaveLength(PER_MINUTE);
    const minute = readEvents(relay.home).filter((e) => e.seq > seq2);
    expect(minute.length).toBeLessThanOrEqual(2 * PER_MINUTE + 1); // session.seen at most once a minute
  });

  it('while the disk is low a reconnect is auth.fail relay.disk_low (close 1013, nothing written) and a disconnect is still recorded', async () => {
    const stays = await pair(relay, 'stays');
    const away = await pair(relay, 'away');
    away.phone.close();
    await online(relay, 1);
    await setFree(10 * MiB);
    const seq = relay.loop.lastSeq;
    const p = await Phone.connect(relay.url);
    p.send('system', 'auth', { session_token: away.token, refresh_token: away.refresh, device_id: 'away', device_name: 'Renamed' }, 'low');
    const f = await answer(p);
    expect(f).toMatchObject({ type: 'auth.fail', payload: { code: 'relay.disk_low', retry_after: expect.any(Number) } });
    expect(appKeepsSession(f.payload.reason as string)).toBe(true);
    expect(await closedWithin(p)).toBe(1013);
    await relay.loop.drain();
    expect(readEvents(relay.home).filter((e) => e.seq > seq)).toEqual([]);
    // A phone that leaves while the disk is low still goes offline in the log.
    stays.phone.close();
    await online(relay, 0);
    expect(
      readEvents(relay.home)
        .filter((e) => e.seq > seq)
        .map((e) => e.type),
    ).toEqual(['phone.disconnected']);
    // Space returns: the reconnect is taken again.
    await setFree(2_000 * MiB);
    const back = await Phone.connect(relay.url);
    expect((await back.auth({ session_token: away.token, refresh_token: away.refresh, device_id: 'away' })).type).toBe('auth.ok');
    back.close();
  });

  it('a session that expires while its reconnect is written: the connect and its disconnect are recorded, and auth.fail says come back (the next connect renews)', async () => {
    const { phone, token, refresh } = await pair(relay, 'edge', { ttl_seconds: HOUR });
    phone.close();
    await online(relay, 0);
    relay.clock.advance(HOUR * 1000 - 1000); // a second of the session left
    const hold = holdNextSync();
    const p = await Phone.connect(relay.url);
    p.send('system', 'auth', { session_token: token, refresh_token: refresh, device_id: 'edge', device_name: 'Pixel' }, 'edge');
    try {
      await hold.held;
      relay.clock.advance(2000);
    } finally {
      hold.release();
    }
    const f = await answer(p);
    expect(f).toMatchObject({ type: 'auth.fail', payload: { code: 'auth.session_expired', retry_after: 1 } });
    expect(appKeepsSession(f.payload.reason as string)).toBe(true);
    expect(await closedWithin(p)).toBe(1013);
    await online(relay, 0);
    const again = await Phone.connect(relay.url);
    expect((await again.auth({ session_token: token, refresh_token: refresh, device_id: 'edge' })).type).toBe('auth.ok');
    again.close();
  });

  it('a phone that leaves while its renewal is written: the renewal is undone and the phone renews later with what it holds', async () => {
    const { phone, token, refresh } = await pair(relay, 'leaver', { ttl_seconds: HOUR });
    phone.close();
    await online(relay, 0);
    relay.clock.advance(2 * HOUR * 1000);
    const seq = relay.loop.lastSeq;
    const hold = holdNextSync();
    const p = await Phone.connect(relay.url);
    p.send('system', 'auth', { session_token: token, refresh_token: refresh, device_id: 'leaver' }, 'leave');
    try {
      await hold.held;
      p.ws.terminate();
      await p.closed;
      // The relay sees the close before the renewal is durable.
      const hub = relay.app.get(PhoneHub);
      for (let i = 0; i < 1000 && hub.openCount() > 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(hub.openCount()).toBe(0);
    } finally {
      hold.release();
    }
    for (let i = 0; i < 500 && !readEvents(relay.home).some((e) => e.seq > seq && e.type === 'trust.rotated' && e.data.reason === 'abandoned'); i++)
      await new Promise((r) => setTimeout(r, 10));
    await online(relay, 0);
    const types = readEvents(relay.home)
      .filter((e) => e.seq > seq)
      .map((e) => (e.type === 'trust.rotated' ? `trust.rotated:${e.data.reason as string}` : e.type));
    expect(types).toEqual(
      expect.arrayContaining([
        'trust.rotated:renewed',
        'session.created',
        'phone.connected',
        'phone.disconnected',
        'trust.rotated:abandoned',
        'session.revoked',
      ]),
    );
    // The old refresh token is current again, bound again to the old session token the phone still holds.
    const back = await Phone.connect(relay.url);
    expect((await back.auth({ session_token: token, refresh_token: refresh, device_id: 'leaver' })).type).toBe('auth.ok');
    back.close();
  });
});
