import * as path from 'node:path';
import { bearer, readEvents, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { brokerStream, pairThroughBroker, phoneViaBroker, reachRelay, TunnelPhone } from '../support/reach';
import { until } from '../support/voice-client';

/**
 * Issue 41, items 6 and 7: a revoke seen through Reach. Before, the route was revoked at the broker as the
 * session was, and the broker closed the route's streams before the relay's last frames went through: the
 * phone and voice sockets closed 1006 with no frame, where direct Secure Link gets `session.revoked` /
 * `voice.error` and 4403; and an attached terminal was never told `terminal.detached {reason: revoked}`
 * (the desktop CLI's `shell --raw` hung).
 */
jest.setTimeout(90_000);

const HOUR = 3600;
const SHELL = path.join(__dirname, '../fixtures/bash-norc');

describe('a revoke through Reach', () => {
  let relay: TestRelay;
  let routeAtBroker: (credentialId: string) => boolean;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ relay, routeAtBroker, close } = await reachRelay({
      env: { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' },
      config: { terminalShell: SHELL },
    }));
  });
  afterEach(() => close());

  const revoke = async (ok: Record<string, any>) =>
    expect((await call(relay, 'DELETE', `/sessions/${ok.token_prefix}`, undefined, bearer(ok.session_token))).status).toBe(200);

  it('the phone socket gets terminal.detached {reason: revoked} and session.revoked, then 4403, through the tunnel; then the route ends', async () => {
    const { cand, ok } = await pairThroughBroker(relay, 'reach-revoke-a', { ttl_seconds: HOUR, grants: { terminal: HOUR } });
    const { stream, phone } = await phoneViaBroker(cand, 'route', ok.route_credential.token);
    expect((await phone.auth({ session_token: ok.session_token })).type).toBe('auth.ok');
    phone.send('terminal', 'terminal.attach', { cols: 80, rows: 24 }, 'attach');
    await phone.next((f) => f.type === 'terminal.attached', 30_000, 'terminal.attached');
    const pid = (phone.frames.find((f) => f.type === 'terminal.attached')!.payload as { pid: number }).pid;

    await revoke(ok);
    expect(await phone.closed).toEqual({ code: 4403, reason: 'session revoked' });
    const told = phone.frames.filter((f) => f.type === 'terminal.detached' || f.type === 'session.revoked');
    expect(told).toEqual([
      expect.objectContaining({ type: 'terminal.detached', payload: { session_name: 'main', reason: 'revoked', exit_code: null, signal: null } }),
      expect.objectContaining({ type: 'session.revoked', payload: { reason: 'revoked', revoked_self: true } }),
    ]);
    await stream.closed;
    await until(() => !routeAtBroker(ok.route_credential.credential_id), 30_000, 'the route revoked at the broker');
    await until(
      () => readEvents(relay.home).some((e) => e.type === 'terminal.closed' && e.data.pid === pid && e.data.reason === 'revoked'),
      30_000,
      'the shell closed',
    );
  });

  it('a voice socket gets voice.error {code: voice.session_revoked}, then 4403, through the tunnel', async () => {
    const { cand, ok } = await pairThroughBroker(relay, 'reach-revoke-b', { ttl_seconds: HOUR });
    const created = await call(relay, 'POST', '/voice/output/session', {}, bearer(ok.session_token));
    expect(created.status).toBe(200);
    // Its own stream over the route, as the app opens one for voice.
    const s = await brokerStream(cand.broker.url, cand.broker.host_id, 'route', ok.route_credential.token);
    if ('error' in s) throw new Error(`the broker refused the route: ${s.error}`);
    const voice = await TunnelPhone.open(s.duplex, cand.proxy, `/relay/voice/output/${String(created.body.session_id)}`, bearer(ok.session_token));
    await voice.next((f) => f.type === 'voice.session.ready', 30_000, 'voice.session.ready');

    await revoke(ok);
    expect(await voice.closed).toEqual({ code: 4403, reason: 'session revoked' });
    expect(voice.frames.find((f) => f.type === 'voice.error')).toMatchObject({ code: 'voice.session_revoked' });
    await s.closed;
    await until(() => !routeAtBroker(ok.route_credential.credential_id), 30_000, 'the route revoked at the broker');
  });
});
