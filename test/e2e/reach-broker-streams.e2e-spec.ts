import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import type { Duplex } from 'node:stream';
import pino from 'pino';
import { WebSocket } from 'ws';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import { newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';
import { svc } from '../support/cli';
import { startRelay, tempHome } from '../support/harness';
import { call } from '../support/http';
import { brokerWithHost, closeStream, fakeHost, outcome, pinnedTls, reachRegister, type ReachOutcome } from '../support/reach-client';
import { until } from '../support/voice-client';

/**
 * Issue 41, item 5: a route credential carries a bounded number of streams at once (`streamsPerRoute`,
 * `svc reach --streams-per-route`), so the app's phone socket, a voice socket and its HTTP calls through
 * Reach each get one, and a phone back from a lost network is not locked out by its dead stream.
 */
jest.setTimeout(120_000);

const message = (stderr: string) => stderr.split('\n').find((l) => l.startsWith('svc: ')) ?? '';

describe('a route credential carries a bounded number of streams at once (issue 41, item 5)', () => {
  it('by default 8: the phone socket, a voice socket and parallel HTTP calls; the 9th is refused too_many_streams, and a closed one frees its place', async () => {
    const b = await brokerWithHost();
    const streams: ReachOutcome[] = [];
    try {
      for (let i = 0; i < 8; i++) streams.push(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route }));
      // Before: the second stream was refused host_busy.
      expect(streams.map(outcome)).toEqual(Array(8).fill('matched'));
      expect(outcome(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route }))).toBe('too_many_streams');
      await closeStream(streams.shift()!);
      await until(() => b.broker.stats().active_streams === 7, 10_000, 'the broker to see the close');
      const next = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route });
      expect(outcome(next)).toBe('matched');
      streams.push(next);
      expect(b.broker.stats().active_streams).toBe(8);
    } finally {
      await Promise.all(streams.map(closeStream));
      await b.broker.close();
    }
  });

  it('a phone that lost its network without closing gets a new stream at once (the dead one waits for its ping timeout)', async () => {
    const b = await brokerWithHost({ pingIntervalMs: 60_000 });
    try {
      const dead = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.12.1' });
      expect(outcome(dead)).toBe('matched');
      // Its socket stays open on the broker's side; the phone is back on another network.
      const back = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.12.2' });
      expect(outcome(back)).toBe('matched');
      await closeStream(dead);
      await closeStream(back);
    } finally {
      await b.broker.close();
    }
  });

  it('`svc reach --streams-per-route 2` sets the bound; a bad value is a usage error', async () => {
    const b = await brokerWithHost();
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
      expect([outcome(s1), outcome(s2)]).toEqual(['matched', 'matched']);
      expect(outcome(await reachRegister(url, { hostId: b.hostId, kind: 'route', token: b.route }))).toBe('too_many_streams');
      await closeStream(s1);
      await closeStream(s2);
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
      expect(outcome(s)).toBe('matched');
      const secure = await pinnedTls((s as { duplex: Duplex }).duplex, cand.proxy);
      // Secure Link's `/relay/` prefix, then the relay's own `/relay/info`.
      const status = await new Promise<number>((resolve, reject) => {
        const req = https.request(
          {
            host: '127.0.0.1',
            path: '/relay/relay/info',
            headers: { authorization: `Bearer ${paired.session_token}` },
            createConnection: () => secure,
          },
          (res) => (res.resume(), resolve(res.statusCode ?? 0)),
        );
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(200);
      secure.destroy();
      await closeStream(s);
    } finally {
      for (const ws of sockets) ws.terminate();
      await relay.close();
      await broker.close();
    }
  });
});
