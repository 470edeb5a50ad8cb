'use strict';
// Issue 2 HTTP benchmarks: GET /health and authenticated GET /sessions (100 sessions) of the real relay
// against a bare fastify server, both in child processes, autocannon (50 connections) in this one.
// Rounds alternate bare/relay so drift on the shared machine hits both; medians are reported.
//   node bench/spine-http.js [--duration 3] [--rounds 3]
const autocannon = require('autocannon');
const WebSocket = require('ws');
const { parseArgs } = require('node:util');
const { median, startChild, fmt, report, verdict } = require('./_lib');

const { values } = parseArgs({ options: { duration: { type: 'string', default: '2' }, rounds: { type: 'string', default: '3' } } });
const DURATION = Number(values.duration);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = 50;

/** req/s, and the server's CPU µs per request (steadier than req/s on a shared machine). */
async function load(server, url, headers) {
  const before = await server.cpu();
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
  const used = (await server.cpu()) - before;
  if (r.errors || r.non2xx) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx answers`);
  return { rps: r.requests.average, cpu: used / r.requests.total };
}

async function pair(base, i) {
  const code = `B${String(i).padStart(5, '0')}`;
  const res = await fetch(`${base}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (res.status !== 200) throw new Error(`register: ${res.status}`);
  const ws = new WebSocket(base.replace(/^http/, 'ws') + '/ws');
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  const ok = await new Promise((resolve) => {
    ws.on('message', (d) => resolve(JSON.parse(d.toString())));
    ws.send(
      JSON.stringify({
        channel: 'system',
        type: 'auth',
        id: 'a',
        payload: { pairing_code: code, device_name: `Phone ${i}`, device_id: `bench-${i}` },
      }),
    );
  });
  if (ok.type !== 'auth.ok') throw new Error(`auth: ${JSON.stringify(ok)}`);
  ws.close();
  return ok.payload.session_token;
}

async function compare(name, bare, relay, target) {
  await load(bare.server, bare.url, bare.headers); // warm-up (JIT) for both, not counted
  await load(relay.server, relay.url, relay.headers);
  const b = [];
  const r = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      b.push(await load(bare.server, bare.url, bare.headers));
      r.push(await load(relay.server, relay.url, relay.headers));
    } else {
      r.push(await load(relay.server, relay.url, relay.headers));
      b.push(await load(bare.server, bare.url, bare.headers));
    }
  }
  const rps = (xs) => median(xs.map((x) => x.rps));
  const cpu = (xs) => median(xs.map((x) => x.cpu));
  const ratio = rps(r) / rps(b);
  const cpuRatio = cpu(b) / cpu(r);
  report(`${name} (autocannon -c ${CONNECTIONS} -d ${DURATION}, ${ROUNDS} rounds)`, [
    ['server', 'median req/s', 'rounds req/s', 'server CPU µs/req (median)'],
    ['bare fastify', fmt(rps(b)), b.map((x) => fmt(x.rps)).join(' / '), fmt(cpu(b), 1)],
    ['svc relay', fmt(rps(r)), r.map((x) => fmt(x.rps)).join(' / '), fmt(cpu(r), 1)],
    ['ratio', ratio.toFixed(2), verdict(ratio, target), `${cpuRatio.toFixed(2)} (bare CPU / relay CPU)`],
  ]);
  return { name, bare: rps(b), relay: rps(r), ratio, target, bareCpuUsPerReq: cpu(b), relayCpuUsPerReq: cpu(r), cpuRatio };
}

(async () => {
  const bare = await startChild('_bare-server.js');
  const relay = await startChild('_relay-server.js');
  try {
    const results = [];
    results.push(
      await compare('GET /health', { server: bare, url: `${bare.info.url}/health` }, { server: relay, url: `${relay.info.url}/health` }, 0.85),
    );
    let token = '';
    for (let i = 0; i < 100; i++) {
      const t = await pair(relay.info.url, i);
      if (i === 0) token = t;
    }
    const check = await (await fetch(`${relay.info.url}/sessions`, { headers: { authorization: `Bearer ${token}` } })).json();
    if (check.sessions.length !== 100) throw new Error(`expected 100 sessions, got ${check.sessions.length}`);
    results.push(
      await compare(
        'GET /sessions, bearer auth, 100 sessions',
        { server: bare, url: `${bare.info.url}/sessions`, headers: { authorization: `Bearer ${bare.info.token}` } },
        { server: relay, url: `${relay.info.url}/sessions`, headers: { authorization: `Bearer ${token}` } },
        0.6,
      ),
    );
    console.log(`\nRESULT ${JSON.stringify(results)}`);
  } finally {
    await Promise.all([bare.stop(), relay.stop()]);
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
