import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { WebSocket } from 'ws';
import { ManualClock } from '../../apps/relay/src/common/clock';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import { newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';
import { svc } from '../support/cli';
import { startRelay, tempHome } from '../support/harness';
import { call } from '../support/http';
import { until } from '../support/voice-client';
import { fakeHost, pinnedTls, reachRegister, type ReachOutcome } from '../support/reach-client';

/**
 * Issue 41, items 3-5: what an unauthenticated stranger can make the broker (`svc reach`) hold or spend,
 * and what a real phone may open. Sources are 127.x.y.z addresses (Linux routes all of 127/8 to lo).
 */
jest.setTimeout(60_000);

type Limits = ConstructorParameters<typeof ReachBroker>[0]['limits'];

async function brokerWith(limits: Limits = {}) {
  const dir = tempHome();
  const hostId = newId();
  const hostToken = newToken();
  const credentials = path.join(dir, 'credentials.json');
  fs.writeFileSync(credentials, JSON.stringify({ hosts: { [hostId]: { host_token_sha256: tokenSha256(hostToken) } } }));
  const logs: string[] = [];
  const logger = pino({ level: 'debug' }, new Writable({ write: (c, _e, cb) => (logs.push(String(c)), cb()) }));
  const broker = new ReachBroker({ credentialsFile: credentials, listen: '127.0.0.1', port: 0, logger, limits });
  await broker.start();
  const host = await fakeHost(broker.url, hostId, hostToken);
  const route = newToken();
  await host.publishRoute('route-1', route);
  return { broker, hostId, hostToken, host, route, logs, credentials };
}

const code = (o: ReachOutcome) => (o.matched ? 'matched' : 'code' in o ? o.code : o.status);
/** Ends a matched stream and waits until its socket is closed (the broker sees the close right after). */
const close = async (o: ReachOutcome) => {
  if (!o.matched || o.ws.readyState === WebSocket.CLOSED) return;
  const closed = new Promise((r) => o.ws.once('close', r));
  o.ws.terminate();
  await closed;
};
const message = (stderr: string) => stderr.split('\n').find((l) => l.startsWith('svc: ')) ?? '';
/** A well-formed registration nobody published: what a stranger guessing tokens sends. */
const bogus = (hostId: string, from: string, connectionId?: string) => ({ hostId, kind: 'route' as const, token: newToken(), from, connectionId });

describe('the Reach broker stores only what a matched credential brought (issue 41, item 3)', () => {
  it('a registration whose credential does not match stores nothing: its connection id stays free for the real phone', async () => {
    const b = await brokerWith();
    try {
      const id = newId();
      const hostCid = newId();
      expect(code(await reachRegister(b.broker.url, bogus(b.hostId, '127.0.5.1', id)))).toBe('unauthorized');
      const wrongHost = await reachRegister(b.broker.url, { role: 'host', hostId: b.hostId, kind: 'host', token: newToken(), connectionId: hostCid });
      expect(code(wrongHost)).toBe('unauthorized');
      // Before: both ids were kept for a day before the credential was checked, so the phone got `replayed`.
      const phone = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: id, from: '127.0.5.2' });
      expect(code(phone)).toBe('matched');
      const again = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: hostCid, from: '127.0.5.2' });
      expect(code(again)).toBe('matched');
      // A matched id is kept: the same registration again is a replay.
      expect(code(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: id }))).toBe('replayed');
      await close(phone);
      await close(again);
    } finally {
      await b.broker.close();
    }
  });

  it('300 bogus registrations from 300 addresses leave the replay store empty and the refusal tracking within its cap', async () => {
    const b = await brokerWith({ refusalsPerMinuteTotal: 100_000, trackedSources: 64 });
    try {
      const before = b.broker.stores();
      for (let i = 0; i < 300; i += 30)
        await Promise.all(
          Array.from({ length: 30 }, async (_, j) =>
            expect(code(await reachRegister(b.broker.url, bogus(b.hostId, `127.6.${Math.floor((i + j) / 200)}.${((i + j) % 200) + 1}`)))).toBe('unauthorized'),
          ),
        );
      const after = b.broker.stores();
      // Before: each one's connection id stayed for a day (and every registration walked them all).
      expect(after.replayIds).toBe(before.replayIds);
      expect(after.refusingSources).toBeLessThanOrEqual(64);
    } finally {
      await b.broker.close();
    }
  });

  it('the replay store keeps at most its cap of matched connection ids, dropping the oldest first', async () => {
    const b = await brokerWith({ replayIds: 3 });
    try {
      const ids = [newId(), newId(), newId(), newId(), newId()];
      for (const id of ids) {
        const s = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: id });
        expect(code(s)).toBe('matched');
        await close(s);
      }
      // The host's own registration went first and was dropped with the two oldest phone ids.
      expect(b.broker.stores().replayIds).toBe(3);
      expect(code(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: ids[4] }))).toBe('replayed');
      const oldest = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: ids[0] });
      expect(code(oldest)).toBe('matched');
      await close(oldest);
    } finally {
      await b.broker.close();
    }
  });

  it('rotating addresses: past the total of refused registrations a minute, a new address gets 429; one that matched recently still gets in', async () => {
    const b = await brokerWith({ refusalsPerMinuteTotal: 20 });
    try {
      const known = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.7.1' });
      expect(code(known)).toBe('matched');
      await close(known);
      for (let i = 1; i <= 20; i++) expect(code(await reachRegister(b.broker.url, bogus(b.hostId, `127.0.8.${i}`)))).toBe('unauthorized');
      // Before: every new address was a new budget of 30, so a stranger with many addresses was never stopped.
      const stranger = await reachRegister(b.broker.url, bogus(b.hostId, '127.0.8.21'));
      expect(stranger).toMatchObject({ status: 429, body: { ok: false, code: 'rate_limited' } });
      expect(Number((stranger as { retryAfter: string }).retryAfter)).toBeGreaterThanOrEqual(1);
      const back = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.7.1' });
      expect(code(back)).toBe('matched');
      await close(back);
      // A phone the broker has not seen waits out the minute like the stranger (the price of the bound).
      expect(code(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.7.2' }))).toBe(429);
      expect(b.logs.join('')).not.toContain(b.route);
    } finally {
      await b.broker.close();
    }
  });

  it('registrations still in flight count against their address: a burst of sockets that never register stops at the bound', async () => {
    const b = await brokerWith({ refusalsPerMinute: 5 });
    const open: WebSocket[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const ws = new WebSocket(b.broker.url, { localAddress: '127.0.9.1' });
        await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
        open.push(ws);
      }
      // Before: each waited its 10 s for a registration, as many as the address cared to open.
      expect(code(await reachRegister(b.broker.url, bogus(b.hostId, '127.0.9.1')))).toBe(429);
      expect(code(await reachRegister(b.broker.url, bogus(b.hostId, '127.0.9.2')))).toBe('unauthorized');
    } finally {
      for (const ws of open) ws.terminate();
      await b.broker.close();
    }
  });
});

describe('the Reach broker counts only refused registrations (issue 41, item 4)', () => {
  it('phones behind one address: 40 matched streams in a minute are all let in; 5 refused ones then close the address, and only it', async () => {
    const b = await brokerWith({ refusalsPerMinute: 5 });
    try {
      // Before: the 31st connection of the minute got 429, however many of them had matched.
      for (let i = 0; i < 40; i++) {
        const s = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.10.1' });
        expect(code(s)).toBe('matched');
        await close(s);
        await until(() => b.broker.stats().active_streams === 0, 5000, 'the broker to see the close');
      }
      for (let i = 0; i < 5; i++) expect(code(await reachRegister(b.broker.url, bogus(b.hostId, '127.0.10.1')))).toBe('unauthorized');
      expect(code(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.10.1' }))).toBe(429);
      expect(code(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.10.2' }))).toBe('matched');
    } finally {
      await b.broker.close();
    }
  });

  it('a socket that never registers counts as refused once its time is up', async () => {
    const b = await brokerWith({ refusalsPerMinute: 2, registerMs: 200 });
    try {
      for (let i = 0; i < 2; i++) {
        const ws = new WebSocket(b.broker.url, { localAddress: '127.0.11.1' });
        const first = new Promise<string>((r) => ws.once('message', (d) => r(JSON.parse(String(d)).code)));
        expect(await first).toBe('unauthorized');
        await new Promise((r) => ws.once('close', r));
      }
      expect(code(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.11.1' }))).toBe(429);
    } finally {
      await b.broker.close();
    }
  });
});

describe('a route credential carries a bounded number of streams at once (issue 41, item 5)', () => {
  it('by default 8: the phone socket, a voice socket and parallel HTTP calls; the 9th is refused too_many_streams, and a closed one frees its place', async () => {
    const b = await brokerWith();
    const streams: ReachOutcome[] = [];
    try {
      for (let i = 0; i < 8; i++) streams.push(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route }));
      // Before: the second stream was refused host_busy.
      expect(streams.map(code)).toEqual(Array(8).fill('matched'));
      expect(code(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route }))).toBe('too_many_streams');
      await close(streams.shift()!);
      await until(() => b.broker.stats().active_streams === 7, 5000, 'the broker to see the close');
      const next = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route });
      expect(code(next)).toBe('matched');
      streams.push(next);
      expect(b.broker.stats().active_streams).toBe(8);
    } finally {
      await Promise.all(streams.map(close));
      await b.broker.close();
    }
  });

  it('a phone that lost its network without closing gets a new stream at once (the dead one waits for its ping timeout)', async () => {
    const b = await brokerWith({ pingIntervalMs: 60_000 });
    try {
      const dead = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.12.1' });
      expect(code(dead)).toBe('matched');
      // Its socket stays open on the broker's side; the phone is back on another network.
      const back = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.12.2' });
      expect(code(back)).toBe('matched');
      await close(dead);
      await close(back);
    } finally {
      await b.broker.close();
    }
  });

  it('`svc reach --streams-per-route 2` sets the bound; a bad value is a usage error', async () => {
    const b = await brokerWith();
    await b.broker.close();
    const bad = await svc(['reach', '--credentials', b.credentials, '--port', '0', '--streams-per-route', '0']);
    expect([bad.code, message(bad.stderr)]).toEqual([2, expect.stringMatching(/^svc: --streams-per-route 0: a whole number from 1/)]);
    for (const flag of ['--refusals-per-minute', '--refusals-per-minute-total', '--replay-ids', '--tracked-sources']) {
      const r = await svc(['reach', '--credentials', b.credentials, '--port', '0', flag, 'many']);
      expect([r.code, message(r.stderr)]).toEqual([2, expect.stringMatching(new RegExp(`^svc: ${flag} many: a whole number from`))]);
    }
    const abort = new AbortController();
    let url = '';
    const run = svc(
      ['reach', '--credentials', b.credentials, '--port', '0', '--log-level', 'ERROR', '--streams-per-route', '2'],
      {},
      {
        signal: abort.signal,
        onStderr: (all) => (url = /hosts connect to (\S+)\)/.exec(all)?.[1] ?? url),
      },
    );
    try {
      const end = Date.now() + 10_000;
      while (!url && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      const host = await fakeHost(url, b.hostId, b.hostToken);
      await host.publishRoute('route-1', b.route);
      const s1 = await reachRegister(url, { hostId: b.hostId, kind: 'route', token: b.route });
      const s2 = await reachRegister(url, { hostId: b.hostId, kind: 'route', token: b.route });
      expect([code(s1), code(s2)]).toEqual(['matched', 'matched']);
      expect(code(await reachRegister(url, { hostId: b.hostId, kind: 'route', token: b.route }))).toBe('too_many_streams');
      await close(s1);
      await close(s2);
      host.ws.close();
    } finally {
      abort.abort();
      expect((await run).code).toBe(0);
    }
  });

  it('through a real relay: with the phone socket open on its route credential, an HTTP call opens a second stream and is answered', async () => {
    const dir = tempHome();
    const hostId = newId();
    const hostToken = newToken();
    const credentials = path.join(dir, 'credentials.json');
    fs.writeFileSync(credentials, JSON.stringify({ hosts: { [hostId]: { host_token_sha256: tokenSha256(hostToken) } } }));
    const broker = new ReachBroker({ credentialsFile: credentials, listen: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }) });
    await broker.start();
    const home = tempHome();
    fs.mkdirSync(path.join(home, 'relay', 'secure-link'), { recursive: true });
    fs.writeFileSync(path.join(home, 'relay', 'secure-link', 'host-id'), `${hostId}\n`);
    const relay = await startRelay({
      home,
      env: {
        RELAY_SECURE_LINK_ENABLED: '1',
        RELAY_SECURE_LINK_HOST: '127.0.0.1',
        RELAY_SECURE_LINK_PORT: '0',
        RELAY_EXPERIMENTAL_REACH_ENABLED: '1',
        RELAY_SECURE_LINK_BROKER_URL: broker.url,
        RELAY_SECURE_LINK_BROKER_HOST_TOKEN: hostToken,
      },
      reachBackoff: { baseMs: 50, maxMs: 200 },
      clock: new ManualClock(new Date().toISOString()),
    });
    const sockets: WebSocket[] = [];
    try {
      const end = Date.now() + 10_000;
      while ((await call(relay, 'GET', '/health')).body.secure_link.reach.state !== 'connected' && Date.now() < end)
        await new Promise((r) => setTimeout(r, 20));
      const qr = JSON.parse((await call(relay, 'POST', '/pairing/mint', {})).body.qr_payload);
      const cand = qr.endpoints.find((e: { role: string }) => e.role === 'outbound_broker');
      const phoneSocket = async (kind: 'bootstrap' | 'route', token: string, payload: Record<string, unknown>) => {
        const s = await reachRegister(cand.broker.url, { hostId, kind, token });
        if (!s.matched) throw new Error(`not matched: ${JSON.stringify(s)}`);
        const secure = await pinnedTls(s.duplex, cand.proxy);
        const ws = new WebSocket('wss://127.0.0.1/relay/ws', { createConnection: () => secure });
        sockets.push(ws, s.ws);
        return new Promise<Record<string, any>>((resolve, reject) => {
          ws.on('open', () => ws.send(JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload })));
          ws.on('message', (d) => {
            const f = JSON.parse(String(d));
            if (f.type === 'auth.ok') resolve(f.payload);
            if (f.type === 'auth.fail') reject(new Error(JSON.stringify(f)));
          });
          ws.on('error', reject);
        });
      };
      const paired = await phoneSocket('bootstrap', cand.broker.token, { pairing_code: qr.relay.code, device_id: 'reach-phone' });
      const route = paired.route_credential.token as string;
      // The app's phone socket on its route credential, left open.
      expect((await phoneSocket('route', route, { session_token: paired.session_token })).token_prefix).toBe(paired.session_token.slice(0, 8));
      // Before: this HTTP call's stream was refused host_busy while the phone socket held the credential.
      const s = await reachRegister(cand.broker.url, { hostId, kind: 'route', token: route });
      expect(code(s)).toBe('matched');
      const secure = await pinnedTls((s as { duplex: import('node:stream').Duplex }).duplex, cand.proxy);
      // Secure Link's `/relay/` prefix, then the relay's own `/relay/info`.
      const status = await new Promise<number>((resolve, reject) => {
        const req = https.request(
          { host: '127.0.0.1', path: '/relay/relay/info', headers: { authorization: `Bearer ${paired.session_token}` }, createConnection: () => secure },
          (res) => (res.resume(), resolve(res.statusCode ?? 0)),
        );
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(200);
      secure.destroy();
      await close(s);
    } finally {
      for (const ws of sockets) ws.terminate();
      await relay.close();
      await broker.close();
    }
  });
});
