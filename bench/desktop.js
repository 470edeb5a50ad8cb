// Desktop tool dispatch round trip: POST /desktop/desktop_terminal through the relay to a desktop client
// and back, against a bare baseline measured side by side in the same run (alternating, several rounds):
//   - bare http→ws proxy: a plain node http server forwards each request as a desktop.command frame to an
//                         echoing desktop client over one ws socket and answers with its desktop.response
//                         (the relay's shape minus Nest, auth, validation and the durable event log)
//   - relay + desktop:    the built relay (dist/) with a desktop client (its own process) that reported its
//                         tools; each call is two durable events (command_sent, command_completed)
// Sequential p50/p99 from one keep-alive client, and 16 calls in flight; the desktop answers at once.
//
// Build first:  npm run build
// Run:          node bench/desktop.js [--rounds 3] [--seq 1000] [--log-dir /dev/shm]
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
const INFLIGHT = 16;
const BODY = JSON.stringify({ command: 'echo hi', timeout: 30 });

/** The desktop client: answers every desktop.command at once, as the CLI's router does. */
function desktopClient(url, onOpen) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.type === 'auth.ok' || m.type === 'desktop.command') onOpen?.(m);
    if (m.type !== 'desktop.command') return;
    ws.send(
      JSON.stringify({
        channel: 'desktop',
        type: 'desktop.response',
        id: m.id,
        payload: { request_id: m.payload.request_id, ok: true, result: { stdout: 'hi\n', stderr: '', exit_code: 0 } },
      }),
    );
  });
  return ws;
}

async function serveProxy() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise((r) => wss.once('listening', r));
  const ready = new Promise((r) => wss.once('connection', r));
  desktopClient(`ws://127.0.0.1:${wss.address().port}`);
  const sock = await ready;
  const waiting = new Map();
  let n = 0;
  sock.on('message', (d) => {
    const m = JSON.parse(d.toString());
    const w = waiting.get(m.payload.request_id);
    waiting.delete(m.payload.request_id);
    w(m.payload);
  });
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const id = String(++n);
      waiting.set(id, (p) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(p));
      });
      const args = JSON.parse(Buffer.concat(chunks).toString() || '{}');
      sock.send(JSON.stringify({ channel: 'desktop', type: 'desktop.command', id, payload: { request_id: id, tool: req.url.slice(9), args } }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { port: server.address().port };
}

async function serveRelay() {
  const dist = path.join(__dirname, '..', 'dist', 'apps', 'relay', 'src');
  const { createRelay } = require(path.join(dist, 'relay.js'));
  const { loadConfig } = require(path.join(dist, 'common', 'config.js'));
  const home = fs.mkdtempSync(path.join(arg('log-dir', os.tmpdir()), 'svc-bench-desktop-'));
  const config = loadConfig({ SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR' });
  const relay = await createRelay({ config, logDestination: new Writable({ write: (_c, _e, cb) => cb() }) });
  const reg = await fetch(`${relay.url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"code":"DESKB1"}',
  });
  if (reg.status !== 200) throw new Error(`register: ${reg.status}`);
  // The desktop is another process, as the CLI's daemon is.
  const child = fork(__filename, ['--desktop', relay.url.replace(/^http/, 'ws') + '/ws'], { stdio: 'inherit' });
  await new Promise((r) => child.once('message', r));
  while (relay.loop.models.desktop.targets().length === 0) await new Promise((r) => setTimeout(r, 5));
  return {
    port: relay.port,
    cleanup: () => {
      child.kill();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

if (process.argv.includes('--desktop')) {
  const ws = desktopClient(arg('desktop'), (m) => {
    if (m.type !== 'auth.ok') return;
    ws.send(
      JSON.stringify({ channel: 'desktop', type: 'desktop.status', id: 's1', payload: { advertised_tools: ['desktop_terminal'], host: 'bench' } }),
    );
    process.send('ready');
  });
  ws.on('open', () =>
    ws.send(
      JSON.stringify({
        channel: 'system',
        type: 'auth',
        id: 'a1',
        payload: { pairing_code: 'DESKB1', device_id: 'bench-desktop', device_name: 'bench', client_surface: 'desktop' },
      }),
    ),
  );
  return;
}

if (process.argv.includes('--serve')) {
  (async () => {
    const { cleanup, ...info } = await { proxy: serveProxy, relay: serveRelay }[arg('serve')]();
    process.on('message', (m) => {
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
const agent = new http.Agent({ keepAlive: true, maxSockets: INFLIGHT });
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

function post(port) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/desktop/desktop_terminal',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}: ${Buffer.concat(chunks)}`));
          resolve(Number(process.hrtime.bigint() - t) / 1e6);
        });
      },
    );
    req.on('error', reject);
    req.end(BODY);
  });
}

async function measure(port) {
  for (let i = 0; i < 100; i++) await post(port);
  const seq = [];
  for (let i = 0; i < SEQ; i++) seq.push(await post(port));
  const t0 = process.hrtime.bigint();
  let done = 0;
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (done < SEQ) {
        done++;
        await post(port);
      }
    }),
  );
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  return { p50: pct(seq, 50), p99: pct(seq, 99), rps: SEQ / secs };
}

(async () => {
  const results = { proxy: [], relay: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of round % 2 ? ['proxy', 'relay'] : ['relay', 'proxy']) {
      const s = await start(kind);
      const r = await measure(s.port);
      s.child.send('exit');
      await new Promise((res) => s.child.once('exit', res));
      results[kind].push(r);
      console.log(
        `round ${round} ${kind.padEnd(5)} p50 ${r.p50.toFixed(3)} ms  p99 ${r.p99.toFixed(3)} ms  ${r.rps.toFixed(0)} calls/s (${INFLIGHT} in flight)`,
      );
    }
  }
  const med = (kind, k) =>
    pct(
      results[kind].map((r) => r[k]),
      50,
    );
  console.log(`\nmedian of ${ROUNDS} rounds, ${SEQ} sequential calls each:`);
  for (const kind of ['proxy', 'relay'])
    console.log(
      `  ${kind === 'proxy' ? 'bare http→ws proxy' : 'relay + desktop   '}  p50 ${med(kind, 'p50').toFixed(3)} ms  p99 ${med(kind, 'p99').toFixed(3)} ms  ${med(kind, 'rps').toFixed(0)} calls/s`,
    );
  console.log(
    `p50 ratio relay / bare proxy: ${(med('relay', 'p50') / med('proxy', 'p50')).toFixed(2)}x; relay overhead +${(med('relay', 'p50') - med('proxy', 'p50')).toFixed(3)} ms`,
  );
  console.log(`throughput ratio relay / bare proxy: ${(med('relay', 'rps') / med('proxy', 'rps')).toFixed(2)}x`);
  agent.destroy();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
