import * as fs from 'node:fs';
import * as path from 'node:path';
import { bearer, json, nextCode, Phone, readEvents, registerCode, startRelay, type Frame, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/**
 * Trusted-device renewal (issue 22.2) over real sockets with a manual clock. The app keeps the refresh token
 * from auth.ok and sends it beside its stored session token on every reconnect (app
 * auth/AuthManager.kt 866-893 authenticate(), 1145-1160 handleAuthOk()).
 */
jest.setTimeout(30_000);

const HOUR = 3600;
const DAY = 86_400;

async function pair(relay: TestRelay, deviceId: string, terms: Record<string, unknown> = {}) {
  const code = nextCode();
  expect((await registerCode(relay, code, terms)).status).toBe(200);
  const phone = await Phone.connect(relay.url);
  const ok = await phone.auth({ pairing_code: code, device_name: 'Pixel', device_id: deviceId });
  expect(ok.type).toBe('auth.ok');
  return { phone, ok, token: ok.payload.session_token as string, refresh: ok.payload.refresh_token as string };
}

/** What the app sends when it comes back: its stored session token, its refresh token and its device id. */
async function reconnect(
  relay: TestRelay,
  auth: { session_token?: string; refresh_token?: string; device_id: string },
): Promise<{ phone: Phone; f: Frame }> {
  const phone = await Phone.connect(relay.url);
  const f = await phone.auth({ device_name: 'Pixel', ...auth });
  return { phone, f };
}

const now = (relay: TestRelay) => Math.floor(relay.clock.now().getTime() / 1000);
const types = (relay: TestRelay, after: number) =>
  readEvents(relay.home)
    .filter((e) => e.seq > after)
    .map((e) => e.type);

describe('trusted-device renewal (refresh tokens)', () => {
  let relay: TestRelay;
  beforeEach(async () => {
    relay = await startRelay();
  });
  afterEach(async () => {
    await relay.close();
  });

  it('a pairing hands out a refresh token; the log and the console keep only what cannot be used', async () => {
    const { ok, refresh, phone } = await pair(relay, 'dev-a');
    expect(refresh).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(ok.payload.refresh_token).not.toBe(ok.payload.session_token);
    expect(ok.payload.refresh_expires_at).toBe(now(relay) + 180 * DAY);
    phone.close();
    await relay.loop.drain();
    const issued = readEvents(relay.home).find((e) => e.type === 'trust.issued')!;
    expect(issued.data).toMatchObject({ deviceId: 'dev-a', reason: 'paired', terms: { sessionTtlSeconds: 30 * DAY } });
    const files = fs.readdirSync(path.join(relay.home, 'relay', 'events'));
    const log = files.map((f) => fs.readFileSync(path.join(relay.home, 'relay', 'events', f), 'utf8')).join('');
    expect(log).not.toContain(refresh);
    expect(relay.logs.join('')).not.toContain(refresh);
    // The console shows the event without the digest at all (issue: never the token or its hash).
    const events = await json(await fetch(`${relay.url}/console/api/events?types=trust.`));
    const shown = JSON.stringify(events);
    expect(shown).toContain('trust.issued');
    expect(shown).not.toContain(String(issued.data.refreshDigest).slice(0, 8));
    // /sessions shows the renewal per device, never the token.
    const list = await json(await fetch(`${relay.url}/sessions`, { headers: bearer(ok.payload.session_token as string) }));
    expect(list.sessions[0].trusted_device).toEqual({
      issued_at: now(relay),
      expires_at: now(relay) + 180 * DAY,
      renewals: 0,
      last_renewed_at: null,
      adopted: false,
    });
    expect(JSON.stringify(list)).not.toContain(refresh);
  });

  it('an expired session renews with the paired lifetime and grants; the refresh token rotates and the used one stops working', async () => {
    const { token, refresh, phone } = await pair(relay, 'dev-b', { ttl_seconds: HOUR, grants: { terminal: 600, bridge: false } });
    phone.close();
    relay.clock.advance(2 * HOUR * 1000);
    await relay.sweep();
    const before = relay.loop.lastSeq;
    const { phone: back, f } = await reconnect(relay, { session_token: token, refresh_token: refresh, device_id: 'dev-b' });
    expect(f.type).toBe('auth.ok');
    const renewed = f.payload.session_token as string;
    expect(renewed).not.toBe(token);
    expect(f.payload.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(f.payload.refresh_token).not.toBe(refresh);
    expect(f.payload.expires_at).toBe(now(relay) + HOUR);
    const grants = f.payload.grants as Record<string, number | null>;
    expect(grants.terminal).toBe(now(relay) + 600);
    expect(grants.bridge).toBeUndefined();
    expect(grants.chat).toBe(now(relay) + HOUR);
    // The new session works over HTTP, the old one does not.
    expect((await fetch(`${relay.url}/sessions`, { headers: bearer(renewed) })).status).toBe(200);
    expect((await fetch(`${relay.url}/sessions`, { headers: bearer(token) })).status).toBe(401);
    await relay.loop.drain();
    expect(types(relay, before)).toEqual(expect.arrayContaining(['trust.rotated', 'session.created', 'phone.connected']));
    const list = await json(await fetch(`${relay.url}/sessions`, { headers: bearer(renewed) }));
    expect(list.sessions[0].trusted_device).toMatchObject({ renewals: 1, last_renewed_at: now(relay) });
    back.close();

    // The rotated-out token comes back: a copy. The trust ends, with every session of the device.
    const live = await reconnect(relay, { session_token: renewed, device_id: 'dev-b' });
    expect(live.f.type).toBe('auth.ok');
    const { f: reused } = await reconnect(relay, { session_token: token, refresh_token: refresh, device_id: 'dev-b' });
    expect(reused.type).toBe('auth.fail');
    expect(reused.payload.code).toBe('refresh_reuse');
    expect(await live.phone.closed).toBe(4403);
    expect((await fetch(`${relay.url}/sessions`, { headers: bearer(renewed) })).status).toBe(401);
    await relay.loop.drain();
    const ev = readEvents(relay.home);
    expect(ev.find((e) => e.type === 'trust.reuse_detected')!.data).toMatchObject({ deviceId: 'dev-b' });
    expect(ev.find((e) => e.type === 'trust.ended')!.data).toMatchObject({ reason: 'reuse', by: 'system' });
    expect(ev.filter((e) => e.type === 'session.revoked').at(-1)!.data).toMatchObject({ reason: 'refresh_reuse' });
    // And the current token died with the trust.
    const { f: dead } = await reconnect(relay, { session_token: renewed, refresh_token: f.payload.refresh_token as string, device_id: 'dev-b' });
    expect(dead.type).toBe('auth.fail');
  });

  it('a wrong device_id is refused (and counted) without rotating; the right device still renews', async () => {
    const { token, refresh, phone } = await pair(relay, 'dev-c', { ttl_seconds: HOUR });
    phone.close();
    relay.clock.advance(2 * HOUR * 1000);
    await relay.sweep();
    const { f: wrong } = await reconnect(relay, { session_token: token, refresh_token: refresh, device_id: 'dev-other' });
    expect(wrong.type).toBe('auth.fail');
    await relay.loop.drain();
    expect(readEvents(relay.home).find((e) => e.type === 'trust.refused')!.data).toMatchObject({ reason: 'device_mismatch' });
    expect(
      readEvents(relay.home)
        .filter((e) => e.type === 'auth.failed')
        .at(-1)!.data,
    ).toMatchObject({ kind: 'token', reason: 'refresh token refused: device_mismatch' });
    const { f: right } = await reconnect(relay, { session_token: token, refresh_token: refresh, device_id: 'dev-c' });
    expect(right.type).toBe('auth.ok');
  });

  it("renewal is bound to the session token the refresh token was issued with: another paired device with the victim's device_id and refresh token cannot renew", async () => {
    const victim = await pair(relay, 'dev-victim', { ttl_seconds: HOUR });
    const thief = await pair(relay, 'dev-thief');
    victim.phone.close();
    relay.clock.advance(2 * HOUR * 1000);
    await relay.sweep();
    // Any paired device lists the victim's device id.
    const listed = await json(await fetch(`${relay.url}/sessions`, { headers: bearer(thief.token) }));
    expect(listed.sessions.map((s: { device_id: string }) => s.device_id)).toContain('dev-thief');
    const seq = relay.loop.lastSeq;
    // The stolen refresh token with no session token, with a made-up one, and with one a character off the thief's own.
    const offByOne = `${thief.token.slice(0, 42)}${thief.token.endsWith('A') ? 'B' : 'A'}`;
    for (const session_token of [undefined, 'x'.repeat(43), offByOne]) {
      const { f } = await reconnect(relay, { session_token, refresh_token: victim.refresh, device_id: 'dev-victim' });
      expect(f).toMatchObject({ type: 'auth.fail', payload: { code: 'invalid_credentials' } });
    }
    await relay.loop.drain();
    const refused = readEvents(relay.home).filter((e) => e.seq > seq && e.type === 'trust.refused');
    expect(refused.map((e) => e.data.reason)).toEqual(['session_mismatch', 'session_mismatch', 'session_mismatch']);
    expect(types(relay, seq)).not.toContain('trust.rotated');
    expect(types(relay, seq)).not.toContain('session.created');
    // The victim, with what it stored (AuthManager.kt:866-893), still renews; and its renewed pair renews again.
    relay.clock.advance(10 * 60 * 1000); // past the failed-token block of the thief's address (the same loopback here)
    const { f: ok, phone: back } = await reconnect(relay, { session_token: victim.token, refresh_token: victim.refresh, device_id: 'dev-victim' });
    expect(ok.type).toBe('auth.ok');
    back.close();
    relay.clock.advance(2 * HOUR * 1000);
    const { f: again, phone: p3 } = await reconnect(relay, {
      session_token: ok.payload.session_token as string,
      refresh_token: ok.payload.refresh_token as string,
      device_id: 'dev-victim',
    });
    expect(again.type).toBe('auth.ok');
    p3.close();
    thief.phone.close();
  });

  it('unknown refresh tokens count as bad credentials: the address is blocked after five', async () => {
    for (let i = 0; i < 5; i++) {
      const { f } = await reconnect(relay, { session_token: 'x'.repeat(43), refresh_token: `nope-${i}`, device_id: 'dev-z' });
      expect(f.type).toBe('auth.fail');
    }
    // Blocked: the next upgrade is refused before any frame (WIRE.md: 429 instead of the upgrade).
    await expect(Phone.connect(relay.url)).rejects.toMatchObject({ status: 429 });
  });

  it("a revoked device's refresh token is dead with it", async () => {
    const a = await pair(relay, 'dev-d', { ttl_seconds: HOUR });
    const b = await pair(relay, 'dev-e');
    const del = await fetch(`${relay.url}/sessions/${a.token.slice(0, 8)}`, { method: 'DELETE', headers: bearer(b.token) });
    expect(del.status).toBe(200);
    await relay.loop.drain();
    expect(readEvents(relay.home).find((e) => e.type === 'trust.ended')!.data).toMatchObject({ deviceId: 'dev-d', reason: 'revoked' });
    const { f } = await reconnect(relay, { session_token: a.token, refresh_token: a.refresh, device_id: 'dev-d' });
    expect(f.type).toBe('auth.fail');
    b.phone.close();
  });

  it("the operator ends a device's renewal and keeps its live session", async () => {
    const { token, refresh, phone } = await pair(relay, 'dev-f', { ttl_seconds: HOUR });
    phone.close();
    const end = await fetch(`${relay.url}/sessions/${token.slice(0, 8)}/trust`, { method: 'DELETE' });
    expect(end.status).toBe(200);
    expect(await end.json()).toEqual({ ok: true, device_id: 'dev-f', trust_ended: true });
    const again = await fetch(`${relay.url}/sessions/${token.slice(0, 8)}/trust`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { code: string }).code).toBe('trust.not_found');
    const { f: live, phone: p2 } = await reconnect(relay, { session_token: token, refresh_token: refresh, device_id: 'dev-f' });
    expect(live.type).toBe('auth.ok');
    // A device whose trust the operator ended is not handed a new one on reconnect... until it pairs again.
    p2.close();
    relay.clock.advance(2 * HOUR * 1000);
    await relay.sweep();
    const { f } = await reconnect(relay, { session_token: token, refresh_token: refresh, device_id: 'dev-f' });
    expect(f.type).toBe('auth.fail');
  });

  it('renewal survives a restart (the trust is replayed from the log) and ends when its lifetime does', async () => {
    const { token, refresh, phone } = await pair(relay, 'dev-g', { ttl_seconds: DAY });
    phone.close();
    relay = await relay.restart();
    relay.clock.advance(2 * DAY * 1000);
    await relay.sweep();
    const { f, phone: back } = await reconnect(relay, { session_token: token, refresh_token: refresh, device_id: 'dev-g' });
    expect(f.type).toBe('auth.ok');
    back.close();
    // 180 days after pairing the trust is over; the phone must pair again.
    relay.clock.advance(180 * DAY * 1000);
    await relay.sweep();
    await relay.loop.drain();
    expect(
      readEvents(relay.home)
        .filter((e) => e.type === 'trust.ended')
        .at(-1)!.data,
    ).toMatchObject({ reason: 'expired' });
    const { f: late } = await reconnect(relay, {
      session_token: f.payload.session_token as string,
      refresh_token: f.payload.refresh_token as string,
      device_id: 'dev-g',
    });
    expect(late.type).toBe('auth.fail');
  });

  it('RELAY_REFRESH_TTL_DAYS=0 turns renewal off; a device paired then adopts a refresh token once it is back on', async () => {
    await relay.close();
    relay = await startRelay({ home: relay.home, env: { RELAY_REFRESH_TTL_DAYS: '0' } });
    const { ok, token, phone } = await pair(relay, 'dev-h', { ttl_seconds: 7 * DAY, grants: { terminal: DAY } });
    expect(ok.payload.refresh_token).toBeUndefined();
    phone.close();
    await relay.close();
    relay = await startRelay({ home: relay.home, clock: relay.clock });
    const before = relay.loop.lastSeq;
    const { f, phone: back } = await reconnect(relay, { session_token: token, device_id: 'dev-h' });
    expect(f.type).toBe('auth.ok');
    expect(f.payload.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    back.close();
    await relay.loop.drain();
    const adopted = readEvents(relay.home).find((e) => e.seq > before && e.type === 'trust.issued')!;
    expect(adopted.data).toMatchObject({ reason: 'adopted', terms: { sessionTtlSeconds: 7 * DAY, grants: { terminal: DAY } } });
    // Reconnecting with the current token writes nothing more: no event per reconnect.
    const seq = relay.loop.lastSeq;
    const { f: again, phone: p3 } = await reconnect(relay, {
      session_token: token,
      refresh_token: f.payload.refresh_token as string,
      device_id: 'dev-h',
    });
    expect(again.type).toBe('auth.ok');
    expect(again.payload.refresh_token).toBeUndefined();
    p3.close();
    await relay.loop.drain();
    expect(types(relay, seq).filter((t) => t !== 'phone.disconnected')).toEqual(['phone.connected']);
  });

  it('a refresh_token that is not a string is a clear auth failure', async () => {
    const { f } = await reconnect(relay, { session_token: 'x', refresh_token: 42 as unknown as string, device_id: 'd' });
    expect(f).toMatchObject({ type: 'auth.fail', payload: { reason: 'refresh_token must be a string' } });
  });
});
