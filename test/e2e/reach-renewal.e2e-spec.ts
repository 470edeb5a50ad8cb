import { bearer, readEvents, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { brokerStream, pairThroughBroker as pairedThroughBroker, phoneViaBroker, reachRelay } from '../support/reach';
import { until } from '../support/voice-client';

/**
 * Issue 41, item 2: a phone that reaches the relay only through the broker renews its session there. Before,
 * its route died with the session (expiry or replacement revoked it at the broker, which closed the very
 * stream carrying the renewal), so a phone whose session ended was locked out of Reach. A route now lives as
 * long as the device's trust; the relay's clock is moved by hand, the broker keeps the wall clock.
 */
jest.setTimeout(90_000);

const HOUR = 3600;
const DAY = 86_400;

/** Moves a manual clock without telling its listeners: time passes, and no sweep writes what it means. */
const jumpQuietly = (relay: TestRelay, ms: number) => void ((relay.clock as unknown as { t: number }).t += ms);

describe('renewal through Reach', () => {
  let relay: TestRelay;
  let routeAtBroker: (credentialId: string) => boolean;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ relay, routeAtBroker, close } = await reachRelay());
  });
  afterEach(() => close());
  const pairThroughBroker = (deviceId: string) => pairedThroughBroker(relay, deviceId, { ttl_seconds: HOUR });

  const pong = async (phone: Awaited<ReturnType<typeof phoneViaBroker>>['phone'], id: string) => {
    phone.send('system', 'ping', {}, id);
    return phone.next((f) => f.type === 'pong' && f.id === id, 20_000, `the pong to ${id}`);
  };
  const reasons = (type: string) =>
    readEvents(relay.home)
      .filter((e) => e.type === type)
      .map((e) => e.data.reason);

  it('a phone whose session expired (swept) renews through the broker with its refresh token and keeps a working route', async () => {
    const { cand, ok } = await pairThroughBroker('reach-renew-a');
    // The route lives as long as the trust (renewal's lifetime), not the one-hour session. The app keeps a
    // route credential only as `kind: broker_route` with the broker's URL and host id it paired with, and reads
    // `expires_at` as a long: whole seconds (AuthManager.kt:1264-1291, applyBrokerRouteCredential).
    expect(ok.route_credential).toMatchObject({ kind: 'broker_route', broker_url: cand.broker.url, host_id: cand.broker.host_id });
    expect(Number.isInteger(ok.route_credential.expires_at)).toBe(true);
    expect(ok.route_credential.expires_at).toBe(ok.refresh_expires_at);
    expect(ok.refresh_expires_at - ok.expires_at).toBeGreaterThan(100 * DAY);
    relay.clock.advanceSeconds(HOUR + 1);
    await relay.sweep();
    expect(readEvents(relay.home).some((e) => e.type === 'session.expired' && e.data.tokenPrefix === ok.token_prefix)).toBe(true);
    expect(routeAtBroker(ok.route_credential.credential_id)).toBe(true);

    // Before: the expiry revoked the route at the broker ("unauthorized"), so the phone could not come back this way.
    const back = await phoneViaBroker(cand, 'route', ok.route_credential.token);
    const renewed = await back.phone.auth({ session_token: ok.session_token, refresh_token: ok.refresh_token, device_id: 'reach-renew-a' });
    expect(renewed.type).toBe('auth.ok');
    const r = renewed.payload as Record<string, any>;
    expect(r.session_token).not.toBe(ok.session_token);
    expect(r.refresh_token).not.toBe(ok.refresh_token);
    // The same route, still the trust's lifetime.
    expect(r.route_credential).toMatchObject({ credential_id: ok.route_credential.credential_id, expires_at: ok.refresh_expires_at });
    // The stream that carried the renewal stays up, and the renewal stands (nothing abandoned).
    await pong(back.phone, 'after-renewal');
    relay.clock.advanceSeconds(60);
    await relay.sweep();
    await pong(back.phone, 'after-a-sweep');
    expect(reasons('trust.rotated')).toEqual(['renewed']);
    back.phone.ws.close();
    await back.stream.closed;

    // Afterwards the route (as the phone stored it from the renewal's auth.ok) still brings it in.
    const again = await phoneViaBroker(cand, 'route', r.route_credential.token);
    const resumed = await again.phone.auth({ session_token: r.session_token, refresh_token: r.refresh_token, device_id: 'reach-renew-a' });
    expect(resumed).toMatchObject({ type: 'auth.ok', payload: { token_prefix: r.token_prefix } });
    again.phone.ws.close();
    await again.stream.closed;
  });

  it('a renewal whose old session is swept only afterwards: the old session’s end does not cut the stream carrying the new one', async () => {
    const { cand, ok } = await pairThroughBroker('reach-renew-b');
    // Past the expiry, before any sweep wrote it.
    jumpQuietly(relay, (HOUR + 1) * 1000);
    const back = await phoneViaBroker(cand, 'route', ok.route_credential.token);
    const renewed = await back.phone.auth({ session_token: ok.session_token, refresh_token: ok.refresh_token, device_id: 'reach-renew-b' });
    expect(renewed.type).toBe('auth.ok');
    await relay.sweep();
    expect(readEvents(relay.home).some((e) => e.type === 'session.expired' && e.data.tokenPrefix === ok.token_prefix)).toBe(true);
    // Before: the old session's expiry revoked the route this stream was matched with, and the broker closed it.
    await pong(back.phone, 'after-the-old-session-ended');
    expect(routeAtBroker(ok.route_credential.credential_id)).toBe(true);
    // The route still brings the renewed session in on another stream.
    const second = await phoneViaBroker(cand, 'route', ok.route_credential.token);
    const r = renewed.payload as Record<string, any>;
    expect(await second.phone.auth({ session_token: r.session_token })).toMatchObject({ type: 'auth.ok', payload: { token_prefix: r.token_prefix } });
    for (const p of [back, second]) {
      p.phone.ws.close();
      await p.stream.closed;
    }
  });

  it('a phone that pairs again over the route its new pairing replaces gets its auth.ok; the old route ends after it, the new one works', async () => {
    const { cand, ok } = await pairThroughBroker('reach-renew-c');
    const mint = await call(relay, 'POST', '/pairing/mint', { ttl_seconds: HOUR });
    const code = (JSON.parse(mint.body.qr_payload as string) as { relay: { code: string } }).relay.code;
    const back = await phoneViaBroker(cand, 'route', ok.route_credential.token);
    // The pairing replaces the device's trust, whose route carries this very stream. Before, the route was
    // revoked as the pairing was written, the broker closed the stream, and the pairing was abandoned.
    const paired = await back.phone.auth({ pairing_code: code, device_id: 'reach-renew-c', device_name: 'Far away' }, 30_000);
    expect(paired.type).toBe('auth.ok');
    const r = paired.payload as Record<string, any>;
    expect(r.route_credential.credential_id).not.toBe(ok.route_credential.credential_id);
    // Then the old route ends at the broker, and with it the stream that carried the pairing.
    await until(() => !routeAtBroker(ok.route_credential.credential_id), 30_000, 'the old route revoked at the broker');
    await back.stream.closed;
    expect(reasons('session.revoked')).toEqual(['replaced']);
    expect(await brokerStream(cand.broker.url, cand.broker.host_id, 'route', ok.route_credential.token)).toEqual({ error: 'unauthorized' });
    const next = await phoneViaBroker(cand, 'route', r.route_credential.token);
    expect(await next.phone.auth({ session_token: r.session_token })).toMatchObject({ type: 'auth.ok', payload: { token_prefix: r.token_prefix } });
    next.phone.ws.close();
    await next.stream.closed;
  });

  it('revoking the device ends its route: the broker refuses it afterwards', async () => {
    const { cand, ok } = await pairThroughBroker('reach-renew-d');
    expect(routeAtBroker(ok.route_credential.credential_id)).toBe(true);
    expect((await call(relay, 'DELETE', `/sessions/${ok.token_prefix}`, undefined, bearer(ok.session_token))).status).toBe(200);
    // The revoke reaches the broker after the event is durable (and the route's streams, none here, ended).
    await until(() => !routeAtBroker(ok.route_credential.credential_id), 30_000, 'the route revoked at the broker');
    expect(await brokerStream(cand.broker.url, cand.broker.host_id, 'route', ok.route_credential.token)).toEqual({ error: 'unauthorized' });
  });
});
