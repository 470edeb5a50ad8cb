import { bearer, nextCode, Phone, readEvents, registerCode, type Frame, type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';

/**
 * Issue 35, item 7: the app's renewal as it runs it (app/src/main/kotlin/com/hermesandroid/relay/auth/
 * AuthManager.kt). On every reconnect it sends its stored session token with its refresh token beside it
 * (authenticate(), 866-893); from each auth.ok it stores the session token, and the refresh token only when
 * one is there (handleAuthOk(), 1145-1160). On an auth.fail it keeps its pairing only when the reason says an
 * authentication timed out (shouldPreservePairedSessionOnAuthFail, 171-179); any other reason is "re-pair".
 */
const HOUR = 3600;

/** The app's own predicate, as written at AuthManager.kt:171-179: true keeps the pairing. */
const appKeepsPairing = (reason: string): boolean => {
  const lower = reason.toLowerCase();
  return lower.includes('timeout') && (lower.includes('auth') || lower.includes('authentication'));
};

/** A reconnect as AuthManager.authenticate() builds it. */
async function appReconnect(relay: TestRelay, session: string, refresh: string | null): Promise<{ phone: Phone; f: Frame }> {
  const phone = await Phone.connect(relay.url);
  const f = await phone.auth({ session_token: session, ...(refresh ? { refresh_token: refresh } : {}), device_id: 'app-1', device_name: 'Pixel 8' });
  return { phone, f };
}

describe('compat: the app renews the way AuthManager.kt does', () => {
  let relay: TestRelay;
  beforeEach(async () => {
    relay = await startRelay();
  });
  afterEach(() => relay.close());

  /** Pairs, lets the session end, renews: what the app then holds if it stored the whole auth.ok. */
  async function pairAndRenew() {
    const code = nextCode();
    expect((await registerCode(relay, code, { ttl_seconds: HOUR })).status).toBe(200);
    const first = await Phone.connect(relay.url);
    const ok = await first.auth({ pairing_code: code, device_id: 'app-1', device_name: 'Pixel 8' });
    const s1 = ok.payload.session_token as string;
    const r1 = ok.payload.refresh_token as string;
    first.close();
    relay.clock.advanceSeconds(HOUR + 1);
    await relay.sweep();
    const renewal = await appReconnect(relay, s1, r1);
    expect(renewal.f.type).toBe('auth.ok');
    renewal.phone.close();
    return { s1, r1, s2: renewal.f.payload.session_token as string, r2: renewal.f.payload.refresh_token as string };
  }

  it('its live session beside a refresh token one rotation behind (the auth.ok was lost mid-swap) lets it in and puts its refresh token right', async () => {
    const { r1, s2 } = await pairAndRenew();
    // The app holds the renewed session but the refresh token from before: the reference lets a live session in
    // whatever rides beside it (plugin/relay/server.py:4299-4330); this relay does too, and reissues the token.
    const back = await appReconnect(relay, s2, r1);
    expect(back.f.type).toBe('auth.ok');
    expect(back.f.payload.session_token).toBe(s2);
    const r3 = back.f.payload.refresh_token as string;
    expect(r3).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r3).not.toBe(r1);
    back.phone.close();
    await relay.loop.drain();
    const rotated = readEvents(relay.home).filter((e) => e.type === 'trust.rotated');
    expect(rotated.at(-1)!.data).toMatchObject({ reason: 'reissued' });
    expect(readEvents(relay.home).some((e) => e.type === 'trust.reuse_detected')).toBe(false);
    // The session still works, and the reissued token renews it when it ends.
    expect((await fetch(`${relay.url}/sessions`, { headers: bearer(s2) })).status).toBe(200);
    relay.clock.advanceSeconds(HOUR + 1);
    await relay.sweep();
    const again = await appReconnect(relay, s2, r3);
    expect(again.f.type).toBe('auth.ok');
    again.phone.close();
  });

  it('when trust really ended (a copied refresh token came back) the only outcome is the re-pair the app shows', async () => {
    const { s1, r1 } = await pairAndRenew();
    // The ended session beside the rotated-out token: not the device's own live session, so a copy.
    const copy = await appReconnect(relay, s1, r1);
    expect(copy.f.type).toBe('auth.fail');
    expect(copy.f.payload.code).toBe('refresh_reuse');
    expect(appKeepsPairing(String(copy.f.payload.reason))).toBe(false);
    expect(readEvents(relay.home).some((e) => e.type === 'trust.reuse_detected')).toBe(true);
  });
  // A refusal for now (disk low, a budget) keeps the app's pairing: test/e2e/reconnect-floods drives it with the same predicate.
});
