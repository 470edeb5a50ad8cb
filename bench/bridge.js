// Device Control round trip: GET /ping through the relay and the phone simulator, against bare
// baselines measured side by side in the same run (alternating, several rounds):
//   - bare ws echo:        a ws client sends a bridge.command frame, a ws server echoes a response
//   - bare http→ws proxy:  a plain node http server forwards each request as a frame over a ws socket
//                          to an echoing "phone" and answers with its reply (the bridge's shape minus
//                          Nest, auth, validation, safety and the durable event log)
//   - relay + phone-sim:   the built relay (dist/) with `PhoneSim` connected, GET /ping with a bearer
// Each server runs in its own child process (the load generator does not share its event loop).
// The durability floor: the p50 of one log commit (writeSync + fdatasync) on the log directory, measured
// in each round; a command needs two in a row, so echo + 2 commits is the least a write-ahead relay can do.
// Sequential p50/p99 from a keep-alive client; throughput with 64 in flight (autocannon -c 64 for HTTP,
// 64 pipelined requests on one socket for the ws echo); CPU µs per command of the server process.
//
// Build first:  npx tsc -p tsconfig.build.json && npx tsc-alias -p tsconfig.build.json
// Run:          node bench/bridge.js [--rounds 3] [--seq 1000] [--seconds 3] [--log-dir /dev/shm]
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { fork } = require('node:child_process');
const { Writable } = require('node:stream');
const { WebSocketServer, WebSocket } = require('ws');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const ROUNDS = Number(arg('rounds', 3));
const SEQ = Number(arg('seq', 1000));
const SECONDS = Number(arg('seconds', 3));
const INFLIGHT = 64;

// ================================ servers (child processes) ==================================
async function serveWs() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise((r) => wss.once('listening', r));
  wss.on('connection', (ws) =>
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      ws.send(
        JSON.stringify({
          channel: 'bridge',
          type: 'bridge.response',
          id: m.id,
          payload: { request_id: m.payload.request_id, status: 200, result: { ok: true, pong: true } },
        }),
      );
    }),
  );
  return { port: wss.address().port };
}

async function serveProxy() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise((r) => wss.once('listening', r));
  const phoneReady = new Promise((r) => wss.once('connection', r));
  const phone = new WebSocket(`ws://127.0.0.1:${wss.address().port}`, { perMessageDeflate: false });
  phone.on('message', (d) => {
    const m = JSON.parse(d.toString());
    phone.send(
      JSON.stringify({
        channel: 'bridge',
        type: 'bridge.response',
        id: m.id,
        payload: { request_id: m.payload.request_id, status: 200, result: { ok: true, pong: true, ts: Date.now() / 1000 } },
      }),
    );
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
    sock.send(
      JSON.stringify({
        channel: 'bridge',
        type: 'bridge.command',
        id,
        payload: { request_id: id, method: req.method, path: req.url, params: {}, body: {} },
      }),
    );
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { port: server.address().port };
}

async function serveRelay() {
  const dist = path.join(__dirname, '..', 'dist', 'apps', 'relay', 'src');
  const { createRelay } = require(path.join(dist, 'relay.js'));
  const { loadConfig } = require(path.join(dist, 'common', 'config.js'));
  const { PhoneSim } = require(path.join(__dirname, '..', 'dist', 'apps', 'phone-sim', 'src', 'phone-sim.js'));
  // --log-dir /dev/shm separates the disk's fsync cost from the relay's CPU cost.
  const home = fs.mkdtempSync(path.join(arg('log-dir', os.tmpdir()), 'svc-bench-bridge-'));
  const config = loadConfig({ SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR' });
  const relay = await createRelay({ config, logDestination: new Writable({ write: (_c, _e, cb) => cb() }) });
  const code = 'BENCH1';
  const reg = await fetch(`${relay.url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (reg.status !== 200) throw new Error(`register: ${reg.status}`);
  if (process.argv.includes('--sim-in-process')) {
    const sim = await new PhoneSim({ relayUrl: relay.url, code, deviceId: 'bench-phone' }).start();
    while (!relay.loop.models.bridge.device(sim.tokenPrefix)) await new Promise((r) => setTimeout(r, 5));
    return { port: relay.port, token: sim.token, cleanup: () => fs.rmSync(home, { recursive: true, force: true }) };
  }
  // The phone is another device: by default the simulator runs in its own process, as `svc phone-sim`.
  const tokenFile = path.join(home, 'sim-token');
  const simProc = require('node:child_process').spawn(
    process.execPath,
    [
      path.join(__dirname, '..', 'bin', 'svc'),
      'phone-sim',
      '--relay',
      relay.url.replace(/^http/, 'ws'),
      '--code',
      code,
      '--device-id',
      'bench-phone',
      '--save-token',
      tokenFile,
      '--quiet',
    ],
    { stdio: 'ignore' },
  );
  while (!fs.existsSync(tokenFile)) await new Promise((r) => setTimeout(r, 10));
  const token = fs.readFileSync(tokenFile, 'utf8').trim();
  while (!relay.loop.models.bridge.device(token.slice(0, 8))) await new Promise((r) => setTimeout(r, 5));
  return {
    port: relay.port,
    token,
    cleanup: () => {
      simProc.kill();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

if (process.argv.includes('--serve')) {
  const kind = arg('serve');
  (async () => {
    const { cleanup, ...info } = await { ws: serveWs, proxy: serveProxy, relay: serveRelay }[kind]();
    let cpu0 = null;
    process.on('message', (m) => {
      if (m === 'cpu-start') cpu0 = process.cpuUsage();
      if (m === 'cpu-stop') {
        const c = process.cpuUsage(cpu0);
        process.send({ cpuUs: c.user + c.system });
      }
      if (m === 'exit') {
        cleanup?.();
        process.exit(0);
      }
    });
    process.send({ ready: true, ...info });
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
  return;
}

// ================================ load (parent process) ======================================
const autocannon = require('autocannon');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const median = (xs) => pct(xs, 50);

function start(kind) {
  const extra = arg('log-dir') ? ['--log-dir', arg('log-dir')] : [];
  const child = fork(__filename, ['--serve', kind, ...extra], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    execArgv: process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, ...m }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited ${code}`)));
  });
}
const ask = (child, msg) =>
  new Promise((resolve) => {
    child.once('message', resolve);
    child.send(msg);
  });

function httpCaller(port, headers) {
  return () =>
    new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/ping', method: 'GET', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end();
    });
}

async function wsClient(port) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
  await new Promise((r) => ws.once('open', r));
  const waiting = new Map();
  let n = 0;
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    const w = waiting.get(m.payload.request_id);
    waiting.delete(m.payload.request_id);
    w();
  });
  const call = () =>
    new Promise((resolve) => {
      const id = String(++n);
      waiting.set(id, resolve);
      ws.send(
        JSON.stringify({
          channel: 'bridge',
          type: 'bridge.command',
          id,
          payload: { request_id: id, method: 'GET', path: '/ping', params: {}, body: {} },
        }),
      );
    });
  return { call, close: () => ws.close() };
}

async function sequential(call, n) {
  for (let i = 0; i < 100; i++) await call(); // warm-up
  const lat = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await call();
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return { p50: pct(lat, 50), p99: pct(lat, 99) };
}

async function wsThroughput(call, seconds) {
  const end = Date.now() + seconds * 1000;
  let done = 0;
  const t = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (Date.now() < end) {
        await call();
        done++;
      }
    }),
  );
  return { rps: done / (Number(process.hrtime.bigint() - t) / 1e9), total: done, errors: 0 };
}

function httpThroughput(port, headers, seconds) {
  return new Promise((resolve, reject) => {
    autocannon({ url: `http://127.0.0.1:${port}/ping`, connections: INFLIGHT, pipelining: 1, duration: seconds, headers }, (err, r) => {
      if (err) return reject(err);
      resolve({ rps: r.requests.total / (r.duration || seconds), total: r.requests.total, errors: r.errors + r.non2xx + r.timeouts });
    });
  });
}

/**
 * The durability floor: a Device Control command is two durable events in a row (the decision before the
 * phone acts, the answer before the caller hears it), so its p50 can never be below two commits of the
 * log's disk plus one round trip to the phone. Measured here as writeSync(300 B) + fdatasync on the log's
 * filesystem, the store's exact I/O per batch.
 */
async function commitLatency(n = 500) {
  const dir = fs.mkdtempSync(path.join(arg('log-dir', os.tmpdir()), 'svc-bench-commit-'));
  const fd = fs.openSync(path.join(dir, 'commit.jsonl'), 'a', 0o600);
  const line = Buffer.alloc(300, 'x');
  const lat = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    fs.writeSync(fd, line);
    await new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  fs.closeSync(fd);
  fs.rmSync(dir, { recursive: true, force: true });
  return pct(lat, 50);
}

async function measure(kind) {
  const s = await start(kind);
  const headers = s.token ? { authorization: `Bearer ${s.token}` } : {};
  let seq, thr;
  if (kind === 'ws') {
    const c = await wsClient(s.port);
    seq = await sequential(c.call, SEQ);
    s.child.send('cpu-start');
    thr = await wsThroughput(c.call, SECONDS);
    c.close();
  } else {
    seq = await sequential(httpCaller(s.port, headers), SEQ);
    s.child.send('cpu-start');
    thr = await httpThroughput(s.port, headers, SECONDS);
  }
  const { cpuUs } = await ask(s.child, 'cpu-stop');
  s.child.send('exit');
  await new Promise((r) => s.child.once('exit', r));
  return { ...seq, rps: thr.rps, errors: thr.errors, cpu: cpuUs / thr.total };
}

(async () => {
  const started = Date.now();
  const labels = { ws: 'bare ws echo', proxy: 'bare http→ws→echo proxy', relay: 'relay + phone-sim' };
  const rows = Object.fromEntries(Object.keys(labels).map((k) => [k, { p50: [], p99: [], rps: [], cpu: [], errors: 0 }]));
  const commits = [];
  for (let round = 1; round <= ROUNDS; round++) {
    commits.push(await commitLatency());
    process.stderr.write(`round ${round} commit (writeSync + fdatasync) p50 ${commits.at(-1).toFixed(3)} ms\n`);
    for (const kind of Object.keys(labels)) {
      const r = await measure(kind);
      for (const k of ['p50', 'p99', 'rps', 'cpu']) rows[kind][k].push(r[k]);
      rows[kind].errors += r.errors;
      process.stderr.write(
        `round ${round} ${kind}: p50 ${r.p50.toFixed(3)} ms, p99 ${r.p99.toFixed(3)} ms, ${r.rps.toFixed(0)} cmd/s, ${r.cpu.toFixed(0)} µs server CPU/cmd, errors ${r.errors}\n`,
      );
    }
  }
  const m = (kind, k) => median(rows[kind][k]);
  console.log(`\nevent log in ${arg('log-dir', os.tmpdir())}`);
  console.log(
    `GET /ping, medians of ${ROUNDS} rounds; ${SEQ} sequential calls; ${SECONDS} s at ${INFLIGHT} in flight; node ${process.version}, ${os.cpus().length} cores, load avg ${os.loadavg()[0].toFixed(1)}`,
  );
  console.log('subject                      p50 ms   p99 ms   cmd/s @64   server CPU µs/cmd   errors');
  for (const [kind, label] of Object.entries(labels)) {
    console.log(
      `${label.padEnd(27)} ${m(kind, 'p50').toFixed(3).padStart(7)}  ${m(kind, 'p99').toFixed(3).padStart(7)}  ${m(kind, 'rps').toFixed(0).padStart(9)}   ${m(kind, 'cpu').toFixed(0).padStart(17)}   ${String(rows[kind].errors).padStart(6)}`,
    );
  }
  console.log(`\np50 ratio relay / bare ws echo:    ${(m('relay', 'p50') / m('ws', 'p50')).toFixed(2)}x  (target <= 1.5x)`);
  console.log(`p50 ratio relay / bare http proxy: ${(m('relay', 'p50') / m('proxy', 'p50')).toFixed(2)}x`);
  const commit = median(commits);
  const floor = m('ws', 'p50') + 2 * commit;
  console.log(
    `durability floor: one log commit p50 ${commit.toFixed(3)} ms; bare ws echo + 2 commits = ${floor.toFixed(3)} ms = ${(floor / m('ws', 'p50')).toFixed(2)}x the echo` +
      ` (the least any write-ahead relay can reach on this disk); relay / floor ${(m('relay', 'p50') / floor).toFixed(2)}x`,
  );
  console.log(
    `throughput relay: ${m('relay', 'rps').toFixed(0)} cmd/s at 64 in flight (target >= 5000/s); ${(m('relay', 'rps') / m('proxy', 'rps')).toFixed(2)}x the bare http proxy`,
  );
  console.log(`bench time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  agent.destroy();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
