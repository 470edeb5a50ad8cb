import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type { MetricsView, StoreView, VerifyJobView, VerifyStartAnswer, VerifyStatusAnswer } from '@svc/console-api';
import { BIN } from '../support/dist';
import { ChainVerifyJobs } from '../../apps/relay/src/console/store/chain-verify-jobs';
import { pairPhone, startRelay, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

const json = { 'content-type': 'application/json' };
/** What a local browser never sends: a foreign Host (DNS rebinding), a cross-site Origin, a proxy's header. */
const FOREIGN: Array<Record<string, string>> = [{ host: 'evil.example' }, { origin: 'http://evil.example' }, { 'x-forwarded-for': '203.0.113.9' }];

/** A gate the verify job waits at between pieces: the test sees it running, then lets it go. */
function holdVerify(relay: TestRelay): { release: () => void; reached: Promise<void> } {
  const jobs = relay.app.get(ChainVerifyJobs);
  let release!: () => void;
  let arrived!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const reached = new Promise<void>((r) => (arrived = r));
  jobs.pace = () => {
    arrived();
    return gate;
  };
  return { release, reached };
}

async function get<T>(relay: TestRelay, p: string): Promise<T> {
  const res = await fetch(`${relay.url}/console/api${p}`);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

const startVerify = (relay: TestRelay, body = '{}', headers: Record<string, string> = json) =>
  fetch(`${relay.url}/console/api/store/verify`, { method: 'POST', headers, body });

async function finished(relay: TestRelay): Promise<VerifyJobView> {
  for (let i = 0; i < 200; i++) {
    const { job } = await get<VerifyStatusAnswer>(relay, '/store/verify');
    if (job && job.state !== 'running') return job;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the verify job did not finish');
}

function rawRequest(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('console Metrics: the sample ring behind the charts', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay?.close());

  it('serves charts whose points come from real traffic, sampled on the relay clock', async () => {
    const empty = await get<MetricsView>(relay, '/metrics');
    expect(empty).toMatchObject({ interval_seconds: 2, window_seconds: 600, metrics_url: '/console/api/metrics/prometheus' });
    expect(empty.charts.map((c) => c.id)).toEqual(['http', 'sockets', 'commit', 'bridge', 'media', 'threads']);
    const samplesBefore = empty.times.length;

    const { phone } = await pairPhone(relay);
    for (let i = 0; i < 5; i++) await fetch(`${relay.url}/health`);
    relay.clock.advanceSeconds(2);
    await relay.sweep();
    relay.clock.advanceSeconds(2);
    await relay.sweep();

    const v = await get<MetricsView>(relay, '/metrics');
    expect(v.times.length).toBe(samplesBefore + 2);
    const chart = (id: string) => v.charts.find((c) => c.id === id)!;
    const last = (id: string, label: string) => chart(id).series.find((s) => s.label === label)?.values;
    // The pairing and the health checks landed in the first of the two samples: rates over its 2 s.
    const families = chart('http').series.map((s) => s.label);
    expect(families).toEqual(expect.arrayContaining(['pairing', 'health']));
    // Requests to /console (this test's GET /metrics above) are counted apart, not drawn among the families.
    expect(families).not.toContain('console');
    expect(chart('http').apart).toMatchObject({ id: 'http:console', label: 'console' });
    expect(chart('http').apart!.values.at(-2)).toBeGreaterThan(0);
    expect(chart('http').apart!.values).toHaveLength(v.times.length);
    expect(last('http', 'health')!.at(-2)).toBeGreaterThanOrEqual(2.5); // 5 requests in 2 s
    expect(last('sockets', 'authenticated')!.at(-1)).toBe(1);
    expect(last('commit', 'p50')!.at(-2)).toBeGreaterThan(0);
    for (const c of v.charts) for (const s of c.series) expect(s.values).toHaveLength(v.times.length);
    phone.close();
  });

  it('refuses what is not a local browser, like every console route', async () => {
    for (const headers of FOREIGN) {
      const res = await rawRequest(`${relay.url}/console/api/metrics`, 'GET', headers);
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body)).toMatchObject({ ok: false, code: 'auth.loopback_only' });
    }
    const res = await relay.app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/console/api/metrics', remoteAddress: '192.168.1.20' });
    expect(res.statusCode).toBe(403);
  });
});

describe('console Store: where the log lives, snapshots, and the full chain check', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ config: { snapshotEvery: 5 } });
    for (let i = 0; i < 3; i++) await pairPhone(relay).then((p) => p.phone.close());
    // Each close is recorded once the relay sees it: wait for the last one, so the log stands still.
    while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
    await relay.loop.drain();
  });
  afterAll(() => relay?.close());

  it('says where the log is, its size, last seq, segments, snapshots and the commands for it', async () => {
    const dir = path.join(relay.home, 'relay', 'events');
    const s = await get<StoreView>(relay, '/store');
    expect(s).toMatchObject({ store: 'file', location: dir, last_seq: relay.loop.lastSeq, last_hash: relay.loop.lastHash, snapshot_every: 5 });
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    expect(s.segments.map((x) => x.file).sort()).toEqual(files.sort());
    expect(s.bytes).toBe(files.reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0));
    expect(s.snapshots.length).toBeGreaterThan(0);
    expect(s.snapshots[0].seq).toBeGreaterThanOrEqual(5);
    expect(s.snapshots[0].at).toBe(Date.parse('2026-03-01T12:00:00Z') / 1000); // the relay's clock, not the file's mtime
    // A command that runs as written from a shell with no `svc` on PATH: this checkout's bin/svc, with the home.
    expect(s.commands.map((c) => c.command)).toContain(`SVC_HOME=${relay.home} ${BIN} relay events export --log ${dir} --to svc-events.jsonl`);
  });

  it('runs one check at a time: progress while it runs, a second start joins it, then the result', async () => {
    const { release, reached } = holdVerify(relay);
    const first = await startVerify(relay);
    expect(first.status).toBe(202);
    const a = (await first.json()) as VerifyStartAnswer;
    expect(a).toMatchObject({ joined: false, job: { state: 'running', up_to_seq: relay.loop.lastSeq } });
    await reached;
    const mid = await get<VerifyStatusAnswer>(relay, '/store/verify');
    expect(mid.job).toMatchObject({ id: a.job.id, state: 'running', records: a.job.up_to_seq });
    expect(mid.job!.bytes_done).toBeGreaterThan(0);
    const second = (await (await startVerify(relay)).json()) as VerifyStartAnswer;
    expect(second).toMatchObject({ joined: true, job: { id: a.job.id, state: 'running' } });
    release();
    const done = await finished(relay);
    expect(done).toMatchObject({ id: a.job.id, state: 'verified', records: a.job.up_to_seq, broken: null });
    expect(done.finished_at).toBe(done.started_at);
    expect(done.duration_ms).toBeGreaterThan(0);
    expect((await get<StoreView>(relay, '/store')).verify).toMatchObject({ id: a.job.id, state: 'verified' });
    // The Overview's "verify from #1" runs through the same job.
    const res = await fetch(`${relay.url}/console/api/chain/verify`, { method: 'POST', headers: json, body: '{}' });
    expect(((await res.json()) as { chain: unknown }).chain).toMatchObject({ state: 'verified', verified_to_seq: relay.loop.lastSeq });
  });

  it('refuses bad input with a 400 and a non-JSON body with a 415, never a 500', async () => {
    for (const body of ['[]', '"go"', '{"restart":true}', '{"x":']) {
      const res = await startVerify(relay, body);
      expect([body, res.status]).toEqual([body, 400]);
      expect(await res.json()).toMatchObject({ ok: false });
    }
    expect(await (await startVerify(relay, '[]')).json()).toMatchObject({ code: 'store.bad_body' });
    expect(await (await startVerify(relay, '{"restart":true}')).json()).toMatchObject({
      code: 'store.bad_body',
      error: expect.stringContaining('restart'),
    });
    const form = await startVerify(relay, 'a=1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    expect(relay.logs.join('')).not.toContain('"statusCode":500');
  });

  it('refuses a foreign Host, a cross-site Origin, a proxy and a LAN peer on every Store route', async () => {
    for (const [method, p] of [
      ['GET', '/console/api/store'],
      ['GET', '/console/api/store/verify'],
      ['POST', '/console/api/store/verify'],
    ] as const) {
      for (const headers of FOREIGN) {
        const res = await rawRequest(`${relay.url}${p}`, method, { ...json, ...headers }, method === 'POST' ? '{}' : undefined);
        expect([method, p, res.status]).toEqual([method, p, 403]);
      }
      const res = await relay.app
        .getHttpAdapter()
        .getInstance()
        .inject({ method, url: p, remoteAddress: '192.168.1.20', headers: json, ...(method === 'POST' ? { payload: '{}' } : {}) });
      expect([method, p, res.statusCode]).toEqual([method, p, 403]);
    }
  });
});

describe('console Store on a damaged log and at shutdown', () => {
  it('names the first bad record, and the top bar turns broken with it', async () => {
    const relay = await startRelay();
    try {
      await pairPhone(relay).then((p) => p.phone.close());
      await relay.loop.drain();
      const dir = path.join(relay.home, 'relay', 'events');
      const file = path.join(dir, fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'))[0]);
      expect((await get<{ chain: { state: string } }>(relay, '/overview')).chain.state).toBe('verified');
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      lines[2] = lines[2].replace('"actor":"', '"actor":"x');
      fs.writeFileSync(file, lines.join('\n'));
      await startVerify(relay);
      const done = await finished(relay);
      expect(done).toMatchObject({ state: 'broken', records: 2, broken: { seq: 3, segment: path.basename(file) } });
      expect(done.broken!.reason).toMatch(/checksum|hash/);
      expect((await get<{ chain: unknown }>(relay, '/overview')).chain).toMatchObject({ state: 'broken', broken_at_seq: 3 });
    } finally {
      await relay.close();
    }
  });

  it('stops a running check when the relay shuts down', async () => {
    const relay = await startRelay();
    const { release, reached } = holdVerify(relay);
    const jobs = relay.app.get(ChainVerifyJobs);
    jobs.chunkBytes = 64; // a record or less per piece: the check is mid-way when the relay stops
    await startVerify(relay);
    await reached;
    const closing = relay.close();
    release();
    await closing;
    const job = jobs.status()!;
    expect(job).toMatchObject({ state: 'cancelled' });
    expect(job.records).toBeLessThan(job.up_to_seq);
    expect(() => jobs.start()).toThrow('shutting down');
  });
});
