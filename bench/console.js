/**
 * Console bench: what the console costs the relay, measured against a bare baseline in the same run.
 *
 *   npx tsc -p tsconfig.build.json && npx tsc-alias -p tsconfig.build.json && npm run build:console
 *   node bench/console.js
 *
 * 1. HTTP: GET /console/api/overview and /console/api/events?limit=100 against GET /health (the bare
 *    baseline route on the same relay), autocannon, 20 connections, 3 s each, 3 rounds, medians.
 * 2. Command path: durable appends/s through CommandLoop.run with 0 console streams (baseline) and with
 *    5 SSE consoles attached; plus the median append→SSE delivery latency.
 * 3. Replay: a console reconnecting with Last-Event-ID far behind: events/s replayed from disk.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const autocannon = require('autocannon');

/** Wall-clock ms with sub-ms precision, comparable across processes on this machine. */
const wall = () => performance.timeOrigin + performance.now();

// The SSE consoles run in a child process, so their parsing is not billed to the relay.
if (process.argv[2] === '--consoles') {
  const [url, n] = [process.argv[3], Number(process.argv[4])];
  const consoles = Array.from({ length: n }, () => openSse(url));
  Promise.all(consoles.map((c) => c.ready)).then(() => process.send({ type: 'ready' }));
  process.on('message', async (m) => {
    const deadline = Date.now() + 15_000;
    while (consoles.some((c) => !c.seen.has(m.last)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    process.send({ type: 'collected', counts: consoles.map((c) => c.count()), seen: Object.fromEntries(consoles[0].seen) });
    consoles.forEach((c) => c.close());
    setTimeout(() => process.exit(0), 50);
  });
  return;
}

const dist = path.resolve(__dirname, '../dist/apps/relay/src');
const { createRelay } = require(path.join(dist, 'relay.js'));
const { loadConfig } = require(path.join(dist, 'common/config/config.js'));

const ROUNDS = 3;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n, d = 0) => n.toLocaleString('en', { maximumFractionDigits: d, minimumFractionDigits: d });

async function cannon(url) {
  const r = await autocannon({ url, connections: 20, duration: 3 });
  return { rps: r.requests.average, p50: r.latency.p50, non2xx: r.non2xx };
}

/** A streaming SSE reader: records arrival time per seq. */
function openSse(url, headers = {}) {
  const ctrl = new AbortController();
  const seen = new Map();
  let count = 0;
  const ready = fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ctrl.signal }).then(async (res) => {
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += dec.decode(value, { stream: true });
          let at;
          while ((at = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, at);
            buf = buf.slice(at + 2);
            const m = /^id: (\d+)$/m.exec(block);
            if (m) {
              seen.set(Number(m[1]), wall());
              count++;
            }
          }
        }
      } catch {
        /* aborted */
      }
    })();
  });
  return { ready, seen, count: () => count, close: () => ctrl.abort() };
}

async function appendBurst(relay, n, concurrency = 64) {
  const sent = new Map();
  const t0 = performance.now();
  let next = 0;
  async function worker() {
    while (next < n) {
      next++;
      const at = wall();
      const [e] = await relay.loop.run('system', () => [{ type: 'ratelimit.cleared', data: { ip: null, reason: 'bench' } }]);
      sent.set(e.seq, at);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { perSec: n / ((performance.now() - t0) / 1000), sent };
}

async function main() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-console-'));
  const config = { ...loadConfig({ SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR' }) };
  const relay = await createRelay({ config, logDestination: { write() {} } });
  const base = relay.url;
  console.log(`relay ${base}, node ${process.version}, ${os.cpus().length} cores (shared: numbers are noisy)\n`);

  // Some history so the overview and the event pages have something to read.
  await appendBurst(relay, 2000);

  const http = { health: [], overview: [], events: [] };
  for (let r = 0; r < ROUNDS; r++) {
    http.health.push(await cannon(`${base}/health`));
    http.overview.push(await cannon(`${base}/console/api/overview`));
    http.events.push(await cannon(`${base}/console/api/events?limit=100`));
  }
  const h = median(http.health.map((x) => x.rps));
  console.log('HTTP (autocannon -c 20 -d 3, median of 3 rounds)');
  for (const [name, runs] of Object.entries(http)) {
    const rps = median(runs.map((x) => x.rps));
    const bad = runs.reduce((a, x) => a + x.non2xx, 0);
    console.log(
      `  ${name.padEnd(9)} ${fmt(rps).padStart(8)} req/s  p50 ${median(runs.map((x) => x.p50))} ms  ratio ${fmt(rps / h, 2)}x${bad ? `  non-2xx ${bad}` : ''}`,
    );
  }

  const N = 4000;
  const bare = [];
  const withConsoles = [];
  const latencies = [];
  for (let r = 0; r < ROUNDS; r++) {
    bare.push((await appendBurst(relay, N)).perSec);
    const child = fork(__filename, ['--consoles', `${base}/console/api/stream`, '5']);
    await new Promise((res) => child.once('message', res));
    await new Promise((res) => setTimeout(res, 100));
    const { perSec, sent } = await appendBurst(relay, N);
    withConsoles.push(perSec);
    const last = Math.max(...sent.keys());
    child.send({ last });
    const got = await new Promise((res) => child.once('message', res));
    const lat = [];
    for (const [seq, at] of sent) if (got.seen[seq] !== undefined) lat.push(got.seen[seq] - at);
    latencies.push(median(lat));
    if (got.counts.some((d) => d !== N)) console.log(`  warning: consoles received ${got.counts.join(', ')} of ${N}`);
  }
  console.log(`\nCommand path (${N} appends, 64 in flight, median of ${ROUNDS})`);
  console.log(`  no console (baseline) ${fmt(median(bare)).padStart(8)} events/s`);
  console.log(
    `  5 SSE consoles        ${fmt(median(withConsoles)).padStart(8)} events/s  ratio ${fmt(median(withConsoles) / median(bare), 2)}x  (consoles read in a child process)`,
  );
  console.log(`  append → SSE delivery p50 ${fmt(median(latencies), 1)} ms (includes the group-commit fsync)`);

  const replays = [];
  for (let r = 0; r < ROUNDS; r++) {
    const target = relay.loop.lastSeq;
    const t0 = performance.now();
    const c = openSse(`${base}/console/api/stream`, { 'last-event-id': '0' });
    await c.ready;
    while (!c.seen.has(target)) await new Promise((res) => setTimeout(res, 5));
    replays.push(target / ((performance.now() - t0) / 1000));
    c.close();
  }
  console.log(`\nReplay from Last-Event-ID 0 (${fmt(relay.loop.lastSeq)} events, ring holds the newest 5000)`);
  console.log(`  ${fmt(median(replays)).padStart(8)} events/s to one console`);

  await relay.close('bench done');
  fs.rmSync(home, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
