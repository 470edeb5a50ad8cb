// Terminal throughput and keystroke echo latency: the relay (compiled, from dist/) against a bare
// node-pty + ws server, side by side in the same run; and the relay with RELAY_TERMINAL_RECORDING on
// (a second relay, its own home) against the same relay without it, interleaved run by run.
//   npx tsc -p tsconfig.build.json && npx tsc-alias -p tsconfig.build.json && node bench/terminal.js
// Env: BENCH_MB (default 200: `head -c <MB>M /dev/zero | base64`), BENCH_RUNS (3), BENCH_KEYS (200).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const pty = require('node-pty');
const WebSocket = require('ws');

const DIST = path.join(__dirname, '..', 'dist', 'apps', 'relay', 'src');
const { createRelay } = require(path.join(DIST, 'relay.js'));
const { loadConfig } = require(path.join(DIST, 'common', 'config.js'));

const MB = Number(process.env.BENCH_MB || 200);
const RUNS = Number(process.env.BENCH_RUNS || 3);
const KEYS = Number(process.env.BENCH_KEYS || 200);
const SHELL = process.env.BENCH_SHELL || '/bin/bash';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** A client that speaks either the relay's envelopes or the bare server's raw text frames. */
class Client {
  constructor(ws, kind) {
    this.ws = ws;
    this.kind = kind;
    this.bytes = 0;
    this.tail = '';
    this.waiter = null;
    ws.on('message', (raw) => {
      let data;
      if (kind === 'relay') {
        const f = JSON.parse(raw.toString());
        if (f.type !== 'terminal.output') {
          if (this.onFrame) this.onFrame(f);
          return;
        }
        data = f.payload.data;
      } else data = raw.toString();
      this.bytes += data.length;
      this.tail = (this.tail + data).slice(-256);
      if (this.waiter && this.waiter.re.test(this.tail)) {
        const w = this.waiter;
        this.waiter = null;
        w.resolve();
      }
    });
  }
  input(data) {
    if (this.kind === 'relay') this.ws.send(JSON.stringify({ channel: 'terminal', type: 'terminal.input', payload: { data } }));
    else this.ws.send(data);
  }
  waitFor(re, ms = 120000) {
    if (re.test(this.tail)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timeout waiting for ${re} (${this.kind}); tail ${JSON.stringify(this.tail)}`)), ms);
      this.waiter = { re, resolve: () => (clearTimeout(t), resolve()) };
    });
  }
}

async function relayClient(relay) {
  const code = 'B' + String(Math.floor(Math.random() * 1e5)).padStart(5, '0');
  const res = await fetch(`${relay.url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (res.status !== 200) throw new Error(`register ${res.status}`);
  const ws = new WebSocket(relay.url.replace(/^http/, 'ws') + '/ws', { perMessageDeflate: false });
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const c = new Client(ws, 'relay');
  const attached = new Promise((resolve) => (c.onFrame = (f) => f.type === 'terminal.attached' && resolve()));
  ws.send(JSON.stringify({ channel: 'system', type: 'auth', payload: { pairing_code: code, device_name: 'bench', device_id: `bench-${code}` } }));
  ws.send(JSON.stringify({ channel: 'terminal', type: 'terminal.attach', payload: { cols: 80, rows: 24 } }));
  await attached;
  return c;
}

/** The baseline: what anyone would write in 20 lines; no auth, no events, no coalescing, no back-pressure. */
async function bareServer() {
  const server = http.createServer();
  const wss = new WebSocket.Server({ server, perMessageDeflate: false });
  wss.on('connection', (ws) => {
    const term = pty.spawn(SHELL, [], {
      name: 'xterm-256color',
      cols: 80,
      rows: 24,
      cwd: os.homedir(),
      env: { ...process.env, TERM: 'xterm-256color' },
    });
    term.onData((d) => ws.send(d));
    ws.on('message', (m) => term.write(m.toString()));
    ws.on('close', () => term.kill('SIGKILL'));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `ws://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => (wss.close(), server.close(r))) };
}

async function bareClient(url) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  return new Client(ws, 'bare');
}

let marker = 0;
async function prepare(c) {
  const m = `READY${++marker}`;
  c.input(`PS1='> '; stty -echo; echo ${m.slice(0, 5)}$((${marker}))\r`);
  await c.waitFor(new RegExp(`READY${marker}`));
  await sleep(50);
}

async function throughput(c) {
  await prepare(c);
  const n = ++marker;
  const start = c.bytes;
  const t0 = process.hrtime.bigint();
  c.input(`head -c ${MB}M /dev/zero | base64; echo TPUT$((${n}))\r`);
  await c.waitFor(new RegExp(`TPUT${n}`));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  return (c.bytes - start) / secs;
}

async function latency(c) {
  c.input('stty echo\r');
  await sleep(100);
  const samples = [];
  for (let i = 0; i < KEYS; i++) {
    if (i % 50 === 0) {
      c.input('\x15'); // ^U: clear the line
      await sleep(30);
    }
    const t0 = process.hrtime.bigint();
    c.tail = '';
    const seen = c.waitFor(/k$/, 5000);
    c.input('k');
    await seen;
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    await sleep(5);
  }
  c.input('\x15');
  return { p50: pct(samples, 50), p99: pct(samples, 99) };
}

async function main() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-terminal-'));
  const config = { ...loadConfig({ SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR' }), terminalShell: SHELL };
  const relay = await createRelay({ config });
  // Recording on, caps above the bench's output, so every byte is recorded (a cast line per pty read).
  const recHome = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-terminal-rec-'));
  const recConfig = {
    ...loadConfig({ SVC_HOME: recHome, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR' }),
    terminalShell: SHELL,
    terminalRecording: { enabled: true, input: false, maxBytes: (RUNS + 1) * 2 * MB * 1024 * 1024, totalBytes: (RUNS + 1) * 4 * MB * 1024 * 1024 },
  };
  const recRelay = await createRelay({ config: recConfig });
  const bare = await bareServer();
  const rc = await relayClient(relay);
  const recc = await relayClient(recRelay);
  const bc = await bareClient(bare.url);
  const rates = { relay: [], bare: [], recording: [] };
  const clients = [
    ['bare', bc],
    ['relay', rc],
    ['recording', recc],
  ];
  for (let i = 0; i < RUNS; i++) {
    // Rotate who goes first so drift on a shared machine hits each.
    const order = clients.map((_, j) => clients[(i + j) % clients.length]);
    for (const [k, c] of order) rates[k].push(await throughput(c));
  }
  const lat = { bare: await latency(bc), relay: await latency(rc) };
  const mbps = (x) => (x / 1e6).toFixed(1);
  const r = median(rates.relay);
  const b = median(rates.bare);
  console.log(`terminal throughput: head -c ${MB}M /dev/zero | base64, ${RUNS} runs each, median (chars/s, MB/s)`);
  console.log(`  bare node-pty+ws : ${mbps(b)} MB/s   runs ${rates.bare.map(mbps).join(', ')}`);
  console.log(`  relay            : ${mbps(r)} MB/s   runs ${rates.relay.map(mbps).join(', ')}`);
  console.log(`  ratio relay/bare : ${(r / b).toFixed(2)}`);
  const rec = median(rates.recording);
  console.log(`  relay, recording: ${mbps(rec)} MB/s   runs ${rates.recording.map(mbps).join(', ')}`);
  console.log(`  ratio recording/relay (goal >= 0.90): ${(rec / r).toFixed(2)}`);
  const casts = fs.existsSync(path.join(recHome, 'relay', 'recordings')) ? fs.readdirSync(path.join(recHome, 'relay', 'recordings')) : [];
  const castBytes = casts.reduce((n, f) => n + fs.statSync(path.join(recHome, 'relay', 'recordings', f)).size, 0);
  console.log(`  recorded: ${casts.length} file(s), ${(castBytes / 1e6).toFixed(1)} MB so far (the shell is still open)`);
  console.log(`keystroke echo latency (${KEYS} keys, one at a time)`);
  console.log(`  bare  p50 ${lat.bare.p50.toFixed(2)} ms  p99 ${lat.bare.p99.toFixed(2)} ms`);
  console.log(`  relay p50 ${lat.relay.p50.toFixed(2)} ms  p99 ${lat.relay.p99.toFixed(2)} ms`);
  rc.ws.close();
  recc.ws.close();
  bc.ws.close();
  await bare.close();
  await relay.close('bench done');
  await recRelay.close('bench done');
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(recHome, { recursive: true, force: true });
  setTimeout(() => process.exit(0), 200).unref();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
