'use strict';
// The relay's footprint against baselines started the same way in the same run (issue 12):
//   - start to the first `GET /health` 200 (ms, from spawn);
//   - idle RSS two seconds after that (MiB, /proc/<pid>/status VmRSS), and again once settled (--settle seconds of
//     idle, default 25: V8's memory reducer gives back the young generation that start-up grew, ~10-20 s in);
//   - RSS per authenticated idle phone socket (KiB, N sockets, relay against bare node:http + ws).
// Baselines (bench/_footprint-servers.js): bare node:http + ws, bare fastify + ws, and a minimal Nest 11 app on
// Fastify with WsAdapter, one route and one gateway (the floor of this stack).
// Run: node bench/footprint.js [--rounds 3] [--sockets 2000]   (after npm run build)
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { parseArgs } = require('node:util');
const WebSocket = require('ws');
const { median, tempDir } = require('./_lib');

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, sockets: { type: 'string', default: '2000' }, settle: { type: 'string', default: '25' } },
});
const ROUNDS = Number(values.rounds);
const SOCKETS = Number(values.sockets);
const SETTLE_MS = Number(values.settle) * 1000;
const ROOT = path.resolve(__dirname, '..');

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function start(kind) {
  const port = await freePort();
  const home = kind === 'relay' ? tempDir('svc-bench-footprint-') : null;
  const t0 = process.hrtime.bigint();
  const child =
    kind === 'relay'
      ? spawn(process.execPath, [path.join(ROOT, 'bin/svc'), 'relay', 'start'], {
          env: {
            ...process.env,
            SVC_HOME: home,
            RELAY_HOST: '127.0.0.1',
            RELAY_PORT: String(port),
            RELAY_LOG_LEVEL: 'ERROR',
            RELAY_LOG_FORMAT: 'json',
            // Thousands of sockets of one session: the reconnect budget (20 at once) is lifted for the bench.
            RELAY_RECONNECT_BURST: '1000000',
          },
          stdio: 'ignore',
        })
      : spawn(process.execPath, [path.join(__dirname, '_footprint-servers.js'), kind], {
          env: { ...process.env, PORT: String(port) },
          stdio: ['ignore', 'ignore', 'inherit'],
        });
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`${kind} exited ${child.exitCode}`);
    await sleep(2);
  }
  const startMs = Number(process.hrtime.bigint() - t0) / 1e6;
  return { kind, port, child, home, startMs };
}

async function stop(s) {
  s.child.kill('SIGTERM');
  await new Promise((r) => (s.child.exitCode !== null ? r() : s.child.once('exit', r)));
  if (s.home) fs.rmSync(s.home, { recursive: true, force: true });
}

/** Opens n sockets that each send a first `system/auth` frame and wait for auth.ok (8 at a time, spread over source addresses). */
async function openSockets(s, n, token) {
  const socks = [];
  for (let i = 0; i < n; i += 8) {
    const batch = Array.from({ length: Math.min(8, n - i) }, (_, j) => {
      const k = i + j;
      const localAddress = `127.1.${Math.floor(k / 250)}.${(k % 250) + 1}`;
      return new Promise((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${s.port}/ws`, { localAddress, perMessageDeflate: false });
        ws.once('open', () => ws.send(JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { session_token: token } })));
        ws.once('message', (d) => (String(d).includes('auth.ok') ? resolve(ws) : reject(new Error(`auth: ${d}`))));
        ws.once('error', reject);
      });
    });
    socks.push(...(await Promise.all(batch)));
  }
  return socks;
}

async function relayToken(s) {
  const code = 'FOOT01';
  await fetch(`http://127.0.0.1:${s.port}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  const ws = new WebSocket(`ws://127.0.0.1:${s.port}/ws`);
  const token = await new Promise((resolve, reject) => {
    ws.once('open', () =>
      ws.send(
        JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { pairing_code: code, device_name: 'bench', device_id: 'bench' } }),
      ),
    );
    ws.once('message', (d) => {
      const f = JSON.parse(String(d));
      if (f.type === 'auth.ok') resolve(f.payload.session_token);
      else reject(new Error(String(d)));
    });
  });
  ws.close();
  return token;
}

async function round() {
  const out = {};
  for (const kind of ['node', 'fastify', 'nest', 'relay']) {
    const s = await start(kind);
    await sleep(2000);
    const idle = rssKiB(s.child.pid);
    await sleep(SETTLE_MS - 2000);
    const settled = rssKiB(s.child.pid);
    let perSocket = null;
    if (kind === 'node' || kind === 'relay') {
      const token = kind === 'relay' ? await relayToken(s) : 'x';
      const before = rssKiB(s.child.pid);
      const socks = await openSockets(s, SOCKETS, token);
      await sleep(1500);
      perSocket = (rssKiB(s.child.pid) - before) / SOCKETS;
      for (const ws of socks) ws.terminate();
    }
    await stop(s);
    out[kind] = { startMs: s.startMs, idleMiB: idle / 1024, settledMiB: settled / 1024, perSocketKiB: perSocket };
  }
  return out;
}

async function main() {
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round());
  const med = (kind, key) => median(rounds.map((r) => r[kind][key]));
  const fmt = (v, d = 1) => (v === null || Number.isNaN(v) ? '-' : v.toFixed(d));
  console.log(`footprint, medians of ${ROUNDS} rounds (each kind started fresh), ${SOCKETS} idle authenticated sockets; node ${process.version}`);
  console.log(`subject                          start->/health ms   idle RSS MiB (2 s)   settled (${SETTLE_MS / 1000} s)   RSS per idle socket KiB`);
  const labels = {
    node: 'bare node:http + ws',
    fastify: 'bare fastify + ws',
    nest: 'minimal Nest 11 + Fastify + WsAdapter',
    relay: 'svc relay (bin/svc relay start)',
  };
  for (const k of ['node', 'fastify', 'nest', 'relay'])
    console.log(
      `${labels[k].padEnd(38)} ${fmt(med(k, 'startMs'), 0).padStart(12)} ${fmt(med(k, 'idleMiB')).padStart(20)} ${fmt(med(k, 'settledMiB')).padStart(16)} ${fmt(k === 'node' || k === 'relay' ? med(k, 'perSocketKiB') : null).padStart(24)}`,
    );
  const r = (a, b) => (a / b).toFixed(2);
  console.log(
    `\nidle RSS relay / minimal Nest app: ${r(med('relay', 'idleMiB'), med('nest', 'idleMiB'))}x at 2 s, ${r(med('relay', 'settledMiB'), med('nest', 'settledMiB'))}x settled (goal <= 1.1x)`,
  );
  console.log(
    `start relay: ${fmt(med('relay', 'startMs'), 0)} ms (goal <= 500 ms); relay / minimal Nest app ${r(med('relay', 'startMs'), med('nest', 'startMs'))}x`,
  );
  console.log(`RSS per idle socket relay / bare ws: ${r(med('relay', 'perSocketKiB'), med('node', 'perSocketKiB'))}x (goal <= 1.3x)`);
  console.log(`RESULT ${JSON.stringify(rounds)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
