import * as http from 'node:http';
import { WebSocket } from 'ws';
import { newId, newToken } from '../../apps/relay/src/reach/protocol';
import { bogusRegistrations, brokerWithHost, closeStream, outcome, reachRegister } from '../support/reach-client';
import { until } from '../support/voice-client';

/**
 * Issue 41, items 3 and 4: what an unauthenticated stranger can make the broker (`svc reach`) hold or
 * spend, and that phones behind one address are not counted for the streams they open. Sources are
 * 127.x.y.z addresses (Linux routes all of 127/8 to lo); IPv6 /64s are in reach-broker-ipv6 and
 * broker-admission.spec.ts. The broker's minutes and days move on its manual clock only.
 */
jest.setTimeout(120_000);

const MINUTE = 60_000;
const DAY = 86_400_000;

/** A well-formed registration nobody published: what a stranger guessing tokens sends. */
const bogus = (hostId: string, from: string, connectionId?: string) => ({ hostId, kind: 'route' as const, token: newToken(), from, connectionId });

/** An upgrade request that is not a WebSocket handshake (no key): the server answers 400 and never makes a socket. */
function malformedUpgrade(url: string, from: string): Promise<number> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: '/v1/connect',
      localAddress: from,
      headers: { connection: 'Upgrade', upgrade: 'websocket' },
    });
    req.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0)));
    req.on('upgrade', (res, socket) => (socket.destroy(), resolve(res.statusCode ?? 0)));
    req.on('error', reject);
    req.end();
  });
}

describe('the Reach broker stores only what a matched credential brought (issue 41, item 3)', () => {
  it('a registration whose credential does not match stores nothing: its connection id stays free for the real phone', async () => {
    const b = await brokerWithHost();
    try {
      const id = newId();
      const hostCid = newId();
      expect(outcome(await reachRegister(b.broker.url, bogus(b.hostId, '127.0.5.1', id)))).toBe('unauthorized');
      const wrongHost = await reachRegister(b.broker.url, { role: 'host', hostId: b.hostId, kind: 'host', token: newToken(), connectionId: hostCid });
      expect(outcome(wrongHost)).toBe('unauthorized');
      // Before: both ids were kept for a day before the credential was checked, so the phone got `replayed`.
      const phone = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: id, from: '127.0.5.2' });
      expect(outcome(phone)).toBe('matched');
      const again = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: hostCid, from: '127.0.5.2' });
      expect(outcome(again)).toBe('matched');
      // A matched id is kept: the same registration again is a replay.
      expect(outcome(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: id }))).toBe('replayed');
      await closeStream(phone);
      await closeStream(again);
    } finally {
      await b.broker.close();
    }
  });

  it('a hostile client: 2,000 bogus registrations from 2,000 addresses get 600 answers (the total a minute), then 429; the broker keeps no id of theirs', async () => {
    const b = await brokerWithHost();
    try {
      const from = Array.from({ length: 2000 }, (_, i) => `127.20.${Math.floor(i / 250)}.${(i % 250) + 1}`);
      const results = await bogusRegistrations({ url: b.broker.url, hostId: b.hostId, from, concurrency: 8 });
      const tally: Record<string, number> = {};
      for (const r of results) tally[r.result] = (tally[r.result] ?? 0) + 1;
      // Before: every new address was a new budget of 30, so all 2,000 were heard, and each one's
      // connection id was kept for a day (and walked on every registration after it).
      expect(tally).toEqual({ unauthorized: 600, 429: 1400 });
      await until(() => b.broker.stores().inFlight === 0, 10_000, 'every connection settled');
      // Only the host's connection id is kept (and its address trusted); of the strangers, their refusal counts.
      expect(b.broker.stores()).toEqual({ replayIds: 1, consumedBootstraps: 0, refusingSources: 600, trustedSources: 1, inFlight: 0 });
      // The phone's address matched before (the host's, 127.0.0.1): it is still let in.
      const phone = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route });
      expect(outcome(phone)).toBe('matched');
      await closeStream(phone);
      // A minute later the strangers are forgotten and a new address is heard again.
      b.clock.advance(MINUTE);
      expect(outcome(await reachRegister(b.broker.url, bogus(b.hostId, '127.21.0.1')))).toBe('unauthorized');
      expect(b.broker.stores().refusingSources).toBe(1);
    } finally {
      await b.broker.close();
    }
  });

  it('a matched connection id is a replay for a day, then forgotten; the replay store keeps at most its cap, the oldest going first', async () => {
    const b = await brokerWithHost({ replayIds: 3 }, { routeDays: 3 });
    try {
      const ids = [newId(), newId(), newId(), newId()];
      for (const id of ids) {
        const s = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: id });
        expect(outcome(s)).toBe('matched');
        await closeStream(s);
      }
      // The host's own registration went first and was dropped with the oldest phone id.
      expect(b.broker.stores().replayIds).toBe(3);
      expect(outcome(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: ids[3] }))).toBe('replayed');
      b.clock.advance(DAY - 1000);
      expect(outcome(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: ids[3] }))).toBe('replayed');
      // Before: kept a day by the system clock, whatever the broker was told.
      b.clock.advance(1000);
      const back = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, connectionId: ids[3] });
      expect(outcome(back)).toBe('matched');
      expect(b.broker.stores().replayIds).toBe(1);
      await closeStream(back);
    } finally {
      await b.broker.close();
    }
  });

  it('rotating addresses: past the total of refused registrations a minute, a new address gets 429; one that matched recently still gets in', async () => {
    const b = await brokerWithHost({ refusalsPerMinuteTotal: 20 });
    try {
      const known = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.7.1' });
      expect(outcome(known)).toBe('matched');
      await closeStream(known);
      for (let i = 1; i <= 20; i++) expect(outcome(await reachRegister(b.broker.url, bogus(b.hostId, `127.0.8.${i}`)))).toBe('unauthorized');
      const stranger = await reachRegister(b.broker.url, bogus(b.hostId, '127.0.8.21'));
      expect(stranger).toMatchObject({ status: 429, retryAfter: '60', body: { ok: false, code: 'rate_limited' } });
      const back = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.7.1' });
      expect(outcome(back)).toBe('matched');
      await closeStream(back);
      // A phone the broker has not seen waits out the minute like the stranger (the price of the bound).
      expect(outcome(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.7.2' }))).toBe(429);
      b.clock.advance(MINUTE);
      const later = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.7.2' });
      expect(outcome(later)).toBe('matched');
      await closeStream(later);
      expect(b.logs.join('')).not.toContain(b.route);
    } finally {
      await b.broker.close();
    }
  });

  it('registrations still in flight count against their address: a burst of sockets that never register stops at the bound', async () => {
    const b = await brokerWithHost({ refusalsPerMinute: 5 });
    const open: WebSocket[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const ws = new WebSocket(b.broker.url, { localAddress: '127.0.9.1' });
        await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
        open.push(ws);
      }
      // Before: each waited its 10 s for a registration, as many as the address cared to open.
      expect(outcome(await reachRegister(b.broker.url, bogus(b.hostId, '127.0.9.1')))).toBe(429);
      expect(outcome(await reachRegister(b.broker.url, bogus(b.hostId, '127.0.9.2')))).toBe('unauthorized');
    } finally {
      for (const ws of open) ws.terminate();
      await b.broker.close();
    }
  });

  it('an upgrade that never becomes a WebSocket (no key: 400) counts as refused and is not held in flight', async () => {
    const b = await brokerWithHost({ refusalsPerMinute: 3 });
    try {
      for (let i = 0; i < 3; i++) expect(await malformedUpgrade(b.broker.url, '127.0.13.1')).toBe(400);
      await until(() => b.broker.stores().inFlight === 0, 10_000, 'the refused upgrades settled');
      expect(outcome(await reachRegister(b.broker.url, bogus(b.hostId, '127.0.13.1')))).toBe(429);
      // Before: each stayed "in flight" for good, so the address (and past the total, every address) was shut out forever.
      b.clock.advance(MINUTE);
      expect(outcome(await reachRegister(b.broker.url, bogus(b.hostId, '127.0.13.1')))).toBe('unauthorized');
    } finally {
      await b.broker.close();
    }
  });
});

describe('the Reach broker counts only refused registrations (issue 41, item 4)', () => {
  it('phones behind one address: 40 matched streams in a minute are all let in; 5 refused ones then close the address for the minute, and only it', async () => {
    const b = await brokerWithHost({ refusalsPerMinute: 5 });
    try {
      // Before: the 31st connection of the minute got 429, however many of them had matched.
      for (let i = 0; i < 40; i++) {
        const s = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.10.1' });
        expect(outcome(s)).toBe('matched');
        await closeStream(s);
        await until(() => b.broker.stats().active_streams === 0, 10_000, 'the broker to see the close');
      }
      for (let i = 0; i < 5; i++) expect(outcome(await reachRegister(b.broker.url, bogus(b.hostId, '127.0.10.1')))).toBe('unauthorized');
      expect(outcome(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.10.1' }))).toBe(429);
      const neighbour = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.10.2' });
      expect(outcome(neighbour)).toBe('matched');
      await closeStream(neighbour);
      b.clock.advance(MINUTE);
      const back = await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.10.1' });
      expect(outcome(back)).toBe('matched');
      await closeStream(back);
    } finally {
      await b.broker.close();
    }
  });

  it('a credential that matched while its host was offline is not counted against the phone', async () => {
    const b = await brokerWithHost({ refusalsPerMinute: 2 });
    try {
      const gone = new Promise((r) => b.host.ws.once('close', r));
      b.host.ws.close();
      await gone;
      await until(() => b.broker.stats().hosts_online === 0, 10_000, 'the host to go');
      for (let i = 0; i < 4; i++)
        expect(outcome(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.14.1' }))).toBe(
          'host_offline',
        );
    } finally {
      await b.broker.close();
    }
  });

  it('a socket that never registers counts as refused once its time is up', async () => {
    const b = await brokerWithHost({ refusalsPerMinute: 2, registerMs: 200 });
    try {
      for (let i = 0; i < 2; i++) {
        const ws = new WebSocket(b.broker.url, { localAddress: '127.0.11.1' });
        const first = new Promise<string>((r) => ws.once('message', (d) => r(JSON.parse(String(d)).code)));
        expect(await first).toBe('unauthorized');
        await new Promise((r) => ws.once('close', r));
      }
      expect(outcome(await reachRegister(b.broker.url, { hostId: b.hostId, kind: 'route', token: b.route, from: '127.0.11.1' }))).toBe(429);
    } finally {
      await b.broker.close();
    }
  });
});
