/* eslint-disable */
// Device Control round trip through the relay and the phone simulator, against bare baselines run
// side by side in the same process and rounds:
//   - bare ws echo: one ws client sends a request frame, a ws server answers it (no HTTP, no log)
//   - bare http→ws proxy: a plain node http server that forwards each request over a ws socket to an
//     echoing "phone" and answers with its reply (the same shape as the bridge, minus Nest, auth,
//     safety and the durable event log)
// Prints p50/p99 of sequential GET /ping and commands/s with 64 in flight.
//
// Build first:  npx tsc -p tsconfig.build.json && npx tsc-alias -p tsconfig.build.json
// Run:          node bench/bridge.js [--rounds 3] [--seq 1000] [--seconds 3]
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { Writable } = require('node:stream');
const { WebSocketServer, WebSocket } = require('ws');

const dist = path.join(__dirname, '..', 'dist', 'apps', 'relay', 'src');
const { createRelay } = require(path.join(dist, 'relay.js'));
const { loadConfig } = require(path.join(dist, 'common', 'config.js'));
const { PhoneSim } = require(path.join(dist, 'phone-sim', 'phone-sim.js'));

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROUNDS = arg('rounds', 3);
const SEQ = arg('seq', 1000);
const SECONDS = arg('seconds', 3);
const INFLIGHT = 64;

const agent = new http.Agent({ keepAlive: true, maxSockets: INFLIGHT });
function get(port, p, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method: 'GET', agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${p}: ${res.statusCode} ${Buffer.concat(chunks)}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const median = (xs) => pct(xs, 50);

async function sequential(call, n) {
  for (let i = 0; i < 50; i++) await call(); // warm-up
  const lat = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await call();
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return { p50: pct(lat, 50), p99: pct(lat, 99) };
}

async function throughput(call, seconds) {
  const end = Date.now() + seconds * 1000;
  let done = 0;
  const cpu0 = process.cpuUsage();
  const t = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (Date.now() < end) {
        await call();
        done++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { rps: done / (Number(process.hrtime.bigint() - t) / 1e9), cpuUsPerCmd: (cpu.user + cpu.system) / done };
}

// ---- bare ws echo -----------------------------------------------------------------------------
async function bareWs() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise((r) => wss.once('listening', r));
  wss.on('connection', (ws) => ws.on('message', (d) => ws.send(d.toString())));
  const ws = new WebSocket(`ws://127.0.0.1:${wss.address().port}`, { perMessageDeflate: false });
  await new Promise((r) => ws.once('open', r));
  const waiting = new Map();
  let n = 0;
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    w(m);
  });
  const call = () => new Promise((resolve) => {
    const id = String(++n);
    waiting.set(id, resolve);
    ws.send(JSON.stringify({ channel: 'bridge', type: 'bridge.command', id, payload: { request_id: id, method: 'GET', path: '/ping', params: {}, body: {} } }));
  });
  return { call, close: () => (ws.close(), wss.close()) };
}

// ---- bare http → ws → echo ------------------------------------------------------------------
async function bareProxy() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise((r) => wss.once('listening', r));
  const phoneReady = new Promise((r) => wss.once('connection', r));
  const phone = new WebSocket(`ws://127.0.0.1:${wss.address().port}`, { perMessageDeflate: false });
  phone.on('message', (d) => {
    const m = JSON.parse(d.toString());
    phone.send(JSON.stringify({ channel: 'bridge', type: 'bridge.response', id: m.id, payload: { request_id: m.payload.request_id, status: 200, result: { ok: true, pong: true } } }));
  });
  const sock = await phoneReady;
  const waiting = new Map();
  let n = 0;
  sock.on('message', (d) => {
    const m = JSON.parse(d.toString());
    const w = waiting.get(m.payload.request_id);
    waiting.delete(m.payload.request_id);
    w(m.payload);
  });
  const server = http.createServer((req, res) => {
    const id = String(++n);
    waiting.set(id, (p) => {
      res.writeHead(p.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(p.result));
    });
    sock.send(JSON.stringify({ channel: 'bridge', type: 'bridge.command', id, payload: { request_id: id, method: 'GET', path: req.url, params: {}, body: {} } }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  return { call: () => get(port, '/ping'), close: () => (server.close(), phone.close(), wss.close()) };
}

// ---- the relay with the phone simulator -----------------------------------------------------
async function relayWithSim() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-bridge-'));
  const config = loadConfig({ SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR' });
  const relay = await createRelay({ config, logDestination: new Writable({ write: (_c, _e, cb) => cb() }) });
  const code = 'BENCH1';
  const reg = await fetch(`${relay.url}/pairing/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
  if (reg.status !== 201) throw new Error(`register: ${reg.status}`);
  const sim = await new PhoneSim({ relayUrl: relay.url, code, deviceId: 'bench-phone' }).start();
  while (!relay.log.models.bridge.device(sim.tokenPrefix)) await new Promise((r) => setTimeout(r, 5));
  const headers = { authorization: `Bearer ${sim.token}` };
  return {
    call: () => get(relay.port, '/ping', headers),
    close: async () => {
      sim.stop();
      await relay.close();
      fs.rmSync(home, { recursive: true, force: true });
    },
    relay,
  };
}

(async () => {
  const rows = { ws: { p50: [], p99: [], rps: [], cpu: [] }, proxy: { p50: [], p99: [], rps: [], cpu: [] }, relay: { p50: [], p99: [], rps: [], cpu: [] } };
  const started = Date.now();
  const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
  const subjects = Object.fromEntries(Object.entries({ ws: bareWs, proxy: bareProxy, relay: relayWithSim }).filter(([k]) => !only || k === only));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, make] of Object.entries(subjects)) {
      const s = await make();
      const seq = await sequential(s.call, SEQ);
      const { rps, cpuUsPerCmd } = await throughput(s.call, SECONDS);
      rows[name].cpu.push(cpuUsPerCmd);
      rows[name].p50.push(seq.p50);
      rows[name].p99.push(seq.p99);
      rows[name].rps.push(rps);
      await s.close();
      process.stderr.write(`round ${round} ${name}: p50 ${seq.p50.toFixed(3)} ms, p99 ${seq.p99.toFixed(3)} ms, ${rps.toFixed(0)} cmd/s, ${cpuUsPerCmd.toFixed(0)} µs CPU/cmd\n`);
    }
  }
  const m = (name, k) => median(rows[name][k]);
  const fmt = (x) => x.toFixed(3);
  console.log(`\nDevice Control GET /ping, ${ROUNDS} rounds (medians of rounds), ${SEQ} sequential calls, ${SECONDS} s at ${INFLIGHT} in flight; node ${process.version}, ${os.cpus().length} cores`);
  console.log('subject                         p50 ms    p99 ms    cmd/s (64 in flight)   CPU µs/cmd');
  for (const [name, label] of [['ws', 'bare ws echo'], ['proxy', 'bare http→ws→echo proxy'], ['relay', 'relay + phone-sim (/ping)']].filter(([k]) => subjects[k])) {
    console.log(`${label.padEnd(30)} ${fmt(m(name, 'p50')).padStart(7)}   ${fmt(m(name, 'p99')).padStart(7)}   ${m(name, 'rps').toFixed(0).padStart(8)}              ${m(name, 'cpu').toFixed(0).padStart(6)}`);
  }
  if (!subjects.relay || !subjects.ws || !subjects.proxy) return process.exit(0);
  console.log(`\nratio relay/bare-ws  p50: ${(m('relay', 'p50') / m('ws', 'p50')).toFixed(2)}x   (target <= 1.5x)`);
  console.log(`ratio relay/proxy    p50: ${(m('relay', 'p50') / m('proxy', 'p50')).toFixed(2)}x`);
  console.log(`relay throughput: ${m('relay', 'rps').toFixed(0)} cmd/s (target >= 5000/s); bare ws ${m('ws', 'rps').toFixed(0)}/s, proxy ${m('proxy', 'rps').toFixed(0)}/s`);
  console.log(`bench time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  agent.destroy();
  process.exit(0);
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
