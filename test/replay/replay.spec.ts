import { ReadModels } from '@svc/domain';
import { encodeRecord, eventsDir, listSegments, replayLog, SnapshotCipher, verifyLog, type StoredEvent } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Secrets } from '../../apps/relay/src/common/auth/secrets';
import { ChainMonitor } from '../../apps/relay/src/console/chain-monitor';
import { bearer, nextCode, Phone, pairPhone, registerCode, startRelay, type TestRelay } from '../support/harness';

const DAY = 86_400;

/** Drives a real relay through the spine's state changes: pairings, shortens, revokes, expiries, failures. */
async function busyRun(relay: TestRelay): Promise<void> {
  const a = await pairPhone(relay, { device: { device_id: 'a' }, terms: { ttl_seconds: 7 * DAY, grants: { bridge: '1h' } } });
  const b = await pairPhone(relay, { device: { device_id: 'b' } });
  const c = await pairPhone(relay, { device: { device_id: 'c' }, terms: { ttl_seconds: 0 } });
  const patch = (token: string, prefix: string, body: unknown) =>
    fetch(`${relay.url}/sessions/${prefix}`, {
      method: 'PATCH',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  expect((await patch(a.token, a.prefix, { ttl_seconds: 2 * DAY, grants: { terminal: '12h' } })).status).toBe(200);
  expect((await fetch(`${relay.url}/sessions/${b.prefix}`, { method: 'DELETE', headers: bearer(a.token) })).status).toBe(200);
  // Failures and a block from another address, then a public request approved and one denied.
  for (let i = 0; i < 5; i++)
    await relay.app.inject({ method: 'GET', url: '/sessions', remoteAddress: '10.9.0.1', headers: { authorization: `Bearer ${'X'.repeat(43)}` } });
  const pub1 = JSON.parse(
    (await relay.app.inject({ method: 'POST', url: '/pairing', remoteAddress: '10.9.0.2', payload: { device_name: 'p1' } })).body,
  );
  const pub2 = JSON.parse((await relay.app.inject({ method: 'POST', url: '/pairing', remoteAddress: '10.9.0.2', payload: {} })).body);
  await relay.app.inject({ method: 'POST', url: '/pairing/approve', headers: relay.op, payload: { request_id: pub1.request_id, ttl_seconds: DAY } });
  await relay.app.inject({ method: 'POST', url: '/pairing/deny', headers: relay.op, payload: { request_id: pub2.request_id } });
  const p = await Phone.connect(relay.url);
  expect((await p.auth({ pairing_code: pub1.code, device_id: 'p1' })).type).toBe('auth.ok');
  // Time passes: the bridge grant expires, an unused code expires, someone is seen.
  await registerCode(relay, nextCode());
  relay.clock.advanceSeconds(3601);
  await relay.sweep();
  await fetch(`${relay.url}/sessions`, { headers: bearer(c.token) });
  // A short session expires; the device that owned it re-pairs and replaces nothing (new id).
  const d = await pairPhone(relay, { device: { device_id: 'd' }, terms: { ttl_seconds: 60 } });
  relay.clock.advanceSeconds(61);
  await relay.sweep();
  const c2 = await pairPhone(relay, { device: { device_id: 'c' } }); // replaces c
  for (const x of [a, b, c, d, c2]) x.phone.close();
  p.close();
  await relay.loop.drain();
}

function readStored(home: string): StoredEvent[] {
  const dir = eventsDir(home);
  return listSegments(dir).flatMap((s) =>
    fs
      .readFileSync(path.join(dir, s.file), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as StoredEvent),
  );
}

function segmentFile(home: string): string {
  const segs = listSegments(eventsDir(home));
  return path.join(eventsDir(home), segs[segs.length - 1].file);
}

/** Settles sockets so the live models stop moving (phone.disconnected events land). */
async function quiesce(relay: TestRelay): Promise<void> {
  for (let i = 0; i < 200 && relay.loop.models.connections.count() > 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(relay.loop.models.connections.count()).toBe(0);
  await relay.loop.drain();
}

describe('replay', () => {
  let relay: TestRelay | null = null;
  afterEach(async () => {
    await relay?.close();
    relay = null;
  });

  it('a run’s log replays to exactly the live read models', async () => {
    relay = await startRelay();
    await busyRun(relay);
    await quiesce(relay);
    const live = relay.loop.models.snapshot();
    const replayed = new ReadModels();
    const summary = replayLog(eventsDir(relay.home), replayed);
    expect(replayed.snapshot()).toEqual(live);
    expect(summary.lastSeq).toBe(relay.loop.lastSeq);
    expect(summary.events).toBe(relay.loop.lastSeq);
    expect(summary.countsByType).toMatchObject({
      'session.created': 6,
      'session.revoked': 2,
      'session.shortened': 1,
      'session.expired': 1,
      'ratelimit.blocked': 1,
    });
    // Sanity: the run left real state behind, so the comparison above is not of two empty models.
    expect(relay.loop.models.sessions.active(relay.clock.now()).length).toBe(3);
  });

  it('after a restart (snapshot + the rest), the live models still equal a full replay from seq 1', async () => {
    relay = await startRelay({ config: { snapshotEvery: 7 } });
    await busyRun(relay);
    await quiesce(relay);
    relay = await relay.restart();
    const a = await pairPhone(relay, { device: { device_id: 'after-restart' } });
    a.phone.close();
    await quiesce(relay);
    expect(fs.readdirSync(path.join(relay.home, 'relay', 'snapshots')).length).toBeGreaterThan(0);
    const replayed = new ReadModels();
    replayLog(eventsDir(relay.home), replayed);
    expect(replayed.snapshot()).toEqual(relay.loop.models.snapshot());
  });

  it.each([
    ['missing a projection (one added since the snapshot)', (m: Record<string, unknown>) => void delete m.sessions],
    ['from an older read-model schema', (m: Record<string, unknown>) => void delete m.schema],
  ])('a snapshot %s is not restored: start-up replays the whole log and says why', async (_label, edit) => {
    relay = await startRelay({ config: { snapshotEvery: 5 } });
    await busyRun(relay);
    await quiesce(relay);
    const home = relay.home;
    const before = relay.loop.models.snapshot();
    await relay.close('test');
    // Rewrite the newest snapshot as an older relay would have written it, signed with the install's key.
    const dir = path.join(home, 'relay', 'snapshots');
    const file = path.join(dir, fs.readdirSync(dir).sort().at(-1)!);
    const secrets = Secrets.load(path.join(home, 'relay'));
    const cipher = new SnapshotCipher(secrets.derivedKey('snapshot-encryption'));
    const stored = (JSON.parse(fs.readFileSync(file, 'utf8')) as { body: string }).body;
    expect(stored).not.toContain('"models"'); // encrypted at rest
    const snap = JSON.parse(cipher.decrypt(stored)!) as { models: Record<string, unknown> };
    edit(snap.models);
    const body = cipher.encrypt(JSON.stringify(snap));
    fs.writeFileSync(file, JSON.stringify({ body, mac: secrets.mac('snapshot', body) }));
    relay = await startRelay({ home, config: { snapshotEvery: 5 } });
    await quiesce(relay);
    expect(relay.logs.join('\n')).toMatch(/snapshot not used .*replaying the whole log/);
    const replayed = new ReadModels();
    replayLog(eventsDir(home), replayed);
    expect(relay.loop.models.snapshot()).toEqual(replayed.snapshot());
    // The sessions the run left are all there (a restored empty projection would have lost them).
    expect(
      relay.loop.models.sessions
        .active(relay.clock.now())
        .map((s) => s.tokenPrefix)
        .sort(),
    ).toEqual((before.sessions as { sessions: Array<{ tokenPrefix: string }> }).sessions.map((s) => s.tokenPrefix).sort());
  });

  it('prefix + rest = whole: any first k events, snapshot, restore into fresh models, the rest applied', async () => {
    relay = await startRelay();
    await busyRun(relay);
    await quiesce(relay);
    const events = readStored(relay.home);
    const whole = new ReadModels();
    for (const e of events) whole.apply(e);
    const expected = whole.snapshot();
    expect(events.length).toBeGreaterThan(30);
    for (let k = 0; k <= events.length; k++) {
      const first = new ReadModels();
      for (const e of events.slice(0, k)) first.apply(e);
      const onDisk = JSON.parse(JSON.stringify(first.snapshot())) as Record<string, unknown>;
      const second = new ReadModels();
      second.restore(onDisk);
      for (const e of events.slice(k)) second.apply(e);
      expect({ k, models: second.snapshot() }).toEqual({ k, models: expected });
    }
  });

  it('a torn last line is cut at restart and reported in relay.started and the log lines', async () => {
    relay = await startRelay();
    const { token, phone } = await pairPhone(relay);
    phone.close();
    await quiesce(relay);
    const home = relay.home;
    const clock = relay.clock;
    await relay.close();
    relay = null;
    const file = segmentFile(home);
    const goodSize = fs.statSync(file).size;
    const lastSeq = readStored(home).at(-1)!.seq;
    // Half of a real record, as a crash in the middle of a write leaves it.
    const { line } = encodeRecord({
      seq: lastSeq + 1,
      id: 'x',
      at: clock.now().toISOString(),
      type: 'session.revoked',
      actor: 'system',
      data: {},
      v: 1,
      prev: 'f'.repeat(64),
    });
    fs.appendFileSync(file, line.slice(0, 40));
    expect(verifyLog(eventsDir(home))).toMatchObject({ ok: true, tornTailBytes: 40 });

    relay = await startRelay({ home, clock });
    const started = readStored(home)
      .filter((e) => e.type === 'relay.started')
      .at(-1)!;
    expect(started.data).toMatchObject({ recovered: { segment: path.basename(file), droppedBytes: 40 } });
    expect(started.seq).toBe(lastSeq + 1);
    const warning = relay.logs.map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => l.level === 40 && /torn/.test(l.msg));
    expect(warning).toBeDefined();
    expect(
      fs
        .readFileSync(file, 'utf8')
        .slice(goodSize)
        .startsWith('{"seq":' + (lastSeq + 1)),
    ).toBe(true);
    expect(verifyLog(eventsDir(home))).toMatchObject({ ok: true, tornTailBytes: 0 });
    // Nothing acknowledged was lost.
    expect((await fetch(`${relay.url}/sessions`, { headers: bearer(token) })).status).toBe(200);
  });

  describe('a broken chain', () => {
    async function closedRun(): Promise<{ home: string; clock: TestRelay['clock']; events: StoredEvent[] }> {
      const r = await startRelay();
      for (let i = 0; i < 4; i++) (await pairPhone(r)).phone.close();
      await quiesce(r);
      const home = r.home;
      const clock = r.clock;
      await r.close();
      return { home, clock, events: readStored(home) };
    }

    function rewriteLine(home: string, seq: number, edit: (line: string) => string | null): void {
      const file = segmentFile(home);
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      const i = lines.findIndex((l) => l.startsWith(`{"seq":${seq},`));
      const next = edit(lines[i]);
      if (next === null) lines.splice(i, 1);
      else lines[i] = next;
      fs.writeFileSync(file, lines.join('\n'));
    }

    it('one flipped byte in the middle: verifyLog names the first bad seq and the relay refuses to start', async () => {
      const { home, clock, events } = await closedRun();
      const mid = events[Math.floor(events.length / 2)].seq;
      rewriteLine(home, mid, (l) => {
        const at = l.indexOf('"type":"') + 9;
        return l.slice(0, at) + String.fromCharCode(l.charCodeAt(at) ^ 0x01) + l.slice(at + 1);
      });
      expect(verifyLog(eventsDir(home))).toMatchObject({ ok: false, seq: mid, reason: 'checksum mismatch' });
      await expect(startRelay({ home, clock })).rejects.toThrow(new RegExp(`event log broken at seq ${mid}\\b`));
      // Refusing changed nothing: the same verdict after the attempt.
      expect(verifyLog(eventsDir(home))).toMatchObject({ ok: false, seq: mid });
    });

    it('a flipped byte in the last complete line is corruption, not a torn write: refused', async () => {
      const { home, clock, events } = await closedRun();
      const last = events.at(-1)!.seq;
      rewriteLine(home, last, (l) => l.replace('"relay.stopping"', '"relay.stoppinG"'));
      expect(verifyLog(eventsDir(home))).toMatchObject({ ok: false, seq: last });
      await expect(startRelay({ home, clock })).rejects.toThrow(/event log broken/);
    });

    it('a removed record is caught at the seq that is missing', async () => {
      const { home, events } = await closedRun();
      const mid = events[5].seq;
      rewriteLine(home, mid, () => null);
      expect(verifyLog(eventsDir(home))).toMatchObject({ ok: false, seq: mid + 1, reason: `expected seq ${mid}` });
    });

    it('an edited record with a recomputed checksum still breaks the chain at the next record', async () => {
      const { home, events } = await closedRun();
      const target = events.find((e) => e.type === 'session.created')!;
      rewriteLine(home, target.seq, () => {
        const forged = { ...target, data: { ...(target.data as Record<string, unknown>), expiresAt: null } };
        return encodeRecord(forged).line;
      });
      expect(verifyLog(eventsDir(home))).toMatchObject({ ok: false, seq: target.seq + 1, reason: 'previous-hash link does not match' });
    });

    it('a removed oldest segment: verify, replay and the console name seq 1, and the relay (with its snapshot) refuses to start', async () => {
      const r = await startRelay({ config: { segmentBytes: 2048 } });
      for (let i = 0; i < 4; i++) (await pairPhone(r)).phone.close();
      await quiesce(r);
      const { home, clock } = r;
      await r.close();
      const [head, second] = listSegments(eventsDir(home));
      expect(second).toBeDefined();
      expect(fs.readdirSync(path.join(home, 'relay', 'snapshots')).length).toBeGreaterThan(0);
      fs.rmSync(path.join(eventsDir(home), head.file));
      expect(verifyLog(eventsDir(home))).toMatchObject({
        ok: false,
        seq: 1,
        segment: second.file,
        reason: expect.stringContaining('does not start at seq 1'),
      });
      expect(() => replayLog(eventsDir(home), new ReadModels())).toThrow(/does not start at seq 1/);
      expect(new ChainMonitor(eventsDir(home), () => 0).check()).toMatchObject({ state: 'broken', broken_at_seq: 1 });
      await expect(startRelay({ home, clock, config: { segmentBytes: 2048 } })).rejects.toThrow(/event log broken at seq 1\b/);
    });

    it('the relay also refuses when the snapshot would let it skip the broken record', async () => {
      const { home, clock, events } = await closedRun();
      expect(fs.readdirSync(path.join(home, 'relay', 'snapshots')).length).toBeGreaterThan(0);
      rewriteLine(home, events[2].seq, (l) => l.replace('"actor":"', '"actor":"x'));
      await expect(startRelay({ home, clock })).rejects.toThrow(/event log broken at seq/);
    });
  });
});
