// MCP tool call vs the same Device Control command over HTTP (issue 25): android_ping over /mcp against
// GET /ping, on the same relay and phone in the same run, with the bare http→ws proxy as the floor, all
// measured side by side (alternating, several rounds):
//   - bare http→ws proxy:  a plain node http server forwards each request as a frame over a ws socket to an
//                          echoing "phone" and answers with its reply (no Nest, auth, safety or event log)
//   - relay HTTP:          GET /ping with the phone's bearer (the built relay, dist/, and `svc phone-sim`
//                          in its own process)
//   - relay MCP:           POST /mcp tools/call android_ping on an open session (JSON answers: the client
//                          declares no elicitation), the request bytes prepared once, as an agent's
//                          client would send them
//   - relay MCP, SDK:      the same call through the MCP SDK's own Client (its zod checks and fetch in the
//                          load process included): what an agent built on the SDK sees end to end
// Sequential p50/p99, the four interleaved call by call from one process; the relay's added cost of MCP is MCP p50 - HTTP p50
// (goal: at most 1 ms). The per-device event budget is lifted in the relay under test (see serveRelay).
//
// Build first:  npm run build
// Run:          node bench/mcp.js [--rounds 3] [--seq 1000] [--log-dir /dev/shm]
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { fork, spawn } = require('node:child_process');
const { Writable } = require('node:stream');
const { WebSocketServer, WebSocket } = require('ws');
const { dist, median } = require('./_lib');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const ROUNDS = Number(arg('rounds', 3));
const SEQ = Number(arg('seq', 1000));
const PROTOCOL = '2025-11-25';

// ================================ servers (child processes) ==================================
async function serveProxy() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise((r) => wss.once('listening', r));
  const phoneReady = new Promise((r) => wss.once('connection', r));
  const phone = new WebSocket(`ws://127.0.0.1:${wss.address().port}`, { perMessageDeflate: false });
  phone.on('message', (d) => {
    const m = JSON.parse(d.toString());
    const payload = { request_id: m.payload.request_id, status: 200, result: { ok: true, pong: true, ts: Date.now() / 1000 } };
    phone.send(JSON.stringify({ channel: 'bridge', type: 'bridge.response', id: m.id, payload }));
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
    const payload = { request_id: id, method: req.method, path: req.url, params: {}, body: {} };
    sock.send(JSON.stringify({ channel: 'bridge', type: 'bridge.command', id, payload }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { port: server.address().port };
}

async function serveRelay() {
  const { createRelay } = dist('apps/relay/src/relay.js');
  const { loadConfig } = dist('apps/relay/src/common/config/config.js');
  const home = fs.mkdtempSync(path.join(arg('log-dir', os.tmpdir()), 'svc-bench-mcp-'));
  const config = loadConfig({ SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR' });
  const relay = await createRelay({ config, logDestination: new Writable({ write: (_c, _e, cb) => cb() }) });
  // The per-device event budget (300 at once, 5 a second) would refuse a benchmark's thousands of commands
  // from one device after the first hundred: the disk guard stays, the budget is lifted for the bench.
  relay.loop.admission = (events) => relay.disk.admit(events);
  const code = 'BENCH1';
  const reg = await fetch(`${relay.url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (reg.status !== 200) throw new Error(`register: ${reg.status}`);
  // The phone is another device: the simulator runs in its own process, as `svc phone-sim`.
  const tokenFile = path.join(home, 'sim-token');
  const bin = path.join(__dirname, '..', 'bin', 'svc');
  const args = [
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
  ];
  const sim = spawn(process.execPath, [bin, ...args], { stdio: 'ignore' });
  while (!fs.existsSync(tokenFile) || fs.readFileSync(tokenFile, 'utf8').trim() === '') await new Promise((r) => setTimeout(r, 10));
  const token = fs.readFileSync(tokenFile, 'utf8').trim();
  while (!relay.loop.models.bridge.device(token.slice(0, 8))) await new Promise((r) => setTimeout(r, 5));
  return {
    port: relay.port,
    token,
    cleanup: () => {
      sim.kill();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

if (process.argv.includes('--serve')) {
  const kind = arg('serve');
  (async () => {
    const { cleanup, ...info } = await { proxy: serveProxy, relay: serveRelay }[kind]();
    const exit = () => {
      cleanup?.();
      process.exit(0);
    };
    process.on('message', (m) => m === 'exit' && exit());
    process.on('disconnect', exit); // the load process is gone: nothing to serve

    process.send({ ready: true, ...info });
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
  return;
}

// ================================ load (parent process) ======================================
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

function start(kind) {
  const extra = arg('log-dir') ? ['--log-dir', arg('log-dir')] : [];
  const child = fork(__filename, ['--serve', kind, ...extra], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, ...m }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited ${code}`)));
  });
}

/** One request on the keep-alive socket; resolves with the status, headers and body text. */
function request(port, method, urlPath, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, method, agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const ok = (what) => (r) => {
  if (r.status !== 200) throw new Error(`${what}: status ${r.status} ${r.text.slice(0, 200)}`);
  return r;
};

/** An MCP session opened by hand (initialize, initialized) and a caller of tools/call android_ping on it. */
async function mcpCaller(port, token) {
  const base = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  });
  const r = ok('initialize')(await request(port, 'POST', '/mcp', base, init));
  const headers = { ...base, 'mcp-session-id': r.headers['mcp-session-id'], 'mcp-protocol-version': PROTOCOL };
  const done = await request(port, 'POST', '/mcp', headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  if (done.status !== 202) throw new Error(`initialized: ${done.status}`);
  let id = 0;
  return async () => {
    const body = `{"jsonrpc":"2.0","id":${++id},"method":"tools/call","params":{"name":"android_ping","arguments":{}}}`;
    const res = ok('tools/call')(await request(port, 'POST', '/mcp', headers, body));
    if (res.text.includes('"isError":true')) throw new Error(`tools/call refused: ${res.text}`);
  };
}

async function sdkCaller(port, token) {
  const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = new Client({ name: 'bench-sdk', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return {
    call: async () => {
      const r = await client.callTool({ name: 'android_ping', arguments: {} });
      if (r.isError) throw new Error('refused');
    },
    close: () => client.close(),
  };
}

/**
 * The subjects' calls interleaved (one of each in turn, the order rotating), so a machine that is busier
 * at one moment than another weighs on all of them alike: the comparison is paired, call by call.
 */
async function interleaved(calls, n) {
  const kinds = Object.keys(calls);
  for (let i = 0; i < 100; i++) for (const k of kinds) await calls[k](); // warm-up
  const lat = Object.fromEntries(kinds.map((k) => [k, []]));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < kinds.length; j++) {
      const k = kinds[(i + j) % kinds.length];
      const t = process.hrtime.bigint();
      await calls[k]();
      lat[k].push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  }
  return Object.fromEntries(kinds.map((k) => [k, { p50: pct(lat[k], 50), p99: pct(lat[k], 99) }]));
}

(async () => {
  const started = Date.now();
  const labels = {
    proxy: 'bare http→ws proxy (floor)',
    http: 'relay HTTP GET /ping',
    mcp: 'relay MCP tools/call android_ping',
    sdk: 'relay MCP via the SDK Client',
  };
  const rows = Object.fromEntries(Object.keys(labels).map((k) => [k, { p50: [], p99: [] }]));
  for (let round = 1; round <= ROUNDS; round++) {
    const proxy = await start('proxy');
    const relay = await start('relay');
    const sdk = await sdkCaller(relay.port, relay.token);
    const calls = {
      proxy: () => request(proxy.port, 'GET', '/ping', {}).then(ok('proxy')),
      http: () => request(relay.port, 'GET', '/ping', { authorization: `Bearer ${relay.token}` }).then(ok('GET /ping')),
      mcp: await mcpCaller(relay.port, relay.token),
      sdk: sdk.call,
    };
    const r = await interleaved(calls, SEQ);
    for (const kind of Object.keys(labels)) {
      rows[kind].p50.push(r[kind].p50);
      rows[kind].p99.push(r[kind].p99);
      process.stderr.write(`round ${round} ${kind}: p50 ${r[kind].p50.toFixed(3)} ms, p99 ${r[kind].p99.toFixed(3)} ms\n`);
    }
    await sdk.close();
    for (const s of [proxy, relay]) {
      s.child.send('exit');
      await new Promise((done) => s.child.once('exit', done));
    }
  }
  const m = (kind, k) => median(rows[kind][k]);
  console.log(`\nevent log in ${arg('log-dir', os.tmpdir())}`);
  console.log(
    `medians of ${ROUNDS} rounds; ${SEQ} sequential calls of each, interleaved; node ${process.version}, ${os.cpus().length} cores, load avg ${os.loadavg()[0].toFixed(1)}`,
  );
  console.log('subject                               p50 ms   p99 ms');
  for (const [kind, label] of Object.entries(labels))
    console.log(`${label.padEnd(36)} ${m(kind, 'p50').toFixed(3).padStart(7)}  ${m(kind, 'p99').toFixed(3).padStart(7)}`);
  const added = m('mcp', 'p50') - m('http', 'p50');
  console.log(`\nMCP adds ${added.toFixed(3)} ms p50 over HTTP (${added <= 1 ? 'ok' : 'MISSED'}: goal <= 1 ms)`);
  console.log(
    `ratios to the bare proxy floor: HTTP ${(m('http', 'p50') / m('proxy', 'p50')).toFixed(2)}x, MCP ${(m('mcp', 'p50') / m('proxy', 'p50')).toFixed(2)}x`,
  );
  console.log(`the SDK Client adds ${(m('sdk', 'p50') - m('mcp', 'p50')).toFixed(3)} ms p50 of its own (in the caller's process)`);
  console.log(`bench time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  agent.destroy();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
