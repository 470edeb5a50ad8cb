// Secure Link and Reach overhead against the direct route, side by side in one run (alternating rounds):
//   - Device Control round trip: GET /ping from the host (loopback) to a phone simulator whose socket
//     arrives directly (ws), through Secure Link (wss, pinned) or through Reach (a broker stream carrying
//     the Secure Link TLS session);
//   - media download: GET /media/{token} of a 1 MiB file by the phone over the same three routes
//     (HTTP/1.1 keep-alive; Reach: one broker stream held for all requests), and over a fourth, `sl_js_stream`:
//     the Secure Link TLS carried by a JS stream over a plain TCP socket, as the phone side of Reach carries it over
//     its broker stream, with no broker: the floor of the client's side of any brokered route.
// The relay (with Secure Link and the Reach connector) and the broker run in one child process; the phone
// and the host's calls run here. Everything is on loopback: the figures are the routes' own costs.
//
// Build first:  npm run build
// Run:          node bench/secure-link.js [--rounds 3] [--pings 60] [--downloads 200]
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const https = require('node:https');
const tls = require('node:tls');
const { fork } = require('node:child_process');
const { Duplex, Writable } = require('node:stream');
const { randomBytes } = require('node:crypto');
const WebSocket = require('ws');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const ROUNDS = Number(arg('rounds', 3));
const PINGS = Number(arg('pings', 500));
const DOWNLOADS = Number(arg('downloads', 200));
const DIST = path.join(__dirname, '..', 'dist', 'apps');
const dbg = (...a) => process.env.BENCH_DEBUG && console.error('[dbg]', ...a);

// ================================ server (child process) =====================================
async function serve() {
  const { createRelay } = require(path.join(DIST, 'relay/src/relay.js'));
  const { loadConfig } = require(path.join(DIST, 'relay/src/common/config/config.js'));
  const { ReachBroker } = require(path.join(DIST, 'relay/src/reach/broker.js'));
  const { newId, newToken, tokenSha256 } = require(path.join(DIST, 'relay/src/reach/protocol.js'));
  const pino = require('pino');
  const quiet = pino({ level: 'error' }, new Writable({ write: (_c, _e, cb) => cb() }));
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-sl-'));
  const hostId = newId();
  const hostToken = newToken();
  fs.writeFileSync(path.join(home, 'creds.json'), JSON.stringify({ hosts: { [hostId]: { host_token_sha256: tokenSha256(hostToken) } } }));
  const broker = new ReachBroker({ credentialsFile: path.join(home, 'creds.json'), listen: '127.0.0.1', port: 0, logger: quiet });
  await broker.start();
  fs.mkdirSync(path.join(home, 'relay', 'secure-link'), { recursive: true });
  fs.writeFileSync(path.join(home, 'relay', 'secure-link', 'host-id'), `${hostId}\n`);
  fs.mkdirSync(path.join(home, 'workspace'), { recursive: true });
  const file = path.join(home, 'workspace', 'one-mib.bin');
  fs.writeFileSync(file, randomBytes(1024 * 1024));
  const config = loadConfig({
    SVC_HOME: home,
    RELAY_HOST: '127.0.0.1',
    RELAY_PORT: '0',
    RELAY_LOG_LEVEL: 'ERROR',
    RELAY_SECURE_LINK_ENABLED: '1',
    RELAY_SECURE_LINK_HOST: '127.0.0.1',
    RELAY_SECURE_LINK_PORT: '0',
    RELAY_EXPERIMENTAL_REACH_ENABLED: '1',
    RELAY_SECURE_LINK_BROKER_URL: broker.url,
    RELAY_SECURE_LINK_BROKER_HOST_TOKEN: hostToken,
  });
  const relay = await createRelay({ config, logDestination: new Writable({ write: (_c, _e, cb) => cb() }) });
  while (!relay.runtime.reach?.connected) await new Promise((r) => setTimeout(r, 10));
  const reg = await fetch(`${relay.url}/media/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ path: file, content_type: 'application/octet-stream', file_name: 'one-mib.bin' }),
  });
  const media = await reg.json();
  if (reg.status !== 200) throw new Error(`media/register ${reg.status} ${JSON.stringify(media)}`);
  process.on('message', async (m) => {
    if (m.type === 'mint') {
      const r = await fetch(`${relay.url}/pairing/mint`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grants: { bridge: 3600 } }),
      });
      process.send({ type: 'minted', qr: JSON.parse((await r.json()).qr_payload) });
    }
    if (m.type === 'exit') {
      await relay.close('bench done');
      await broker.close();
      fs.rmSync(home, { recursive: true, force: true });
      process.exit(0);
    }
  });
  // The operator's routes (select-active) take the home's operator key, as the svc CLI sends it.
  const operatorKey = fs.readFileSync(path.join(home, 'relay', 'operator.key'), 'utf8').trim();
  process.send({ type: 'ready', url: relay.url, mediaToken: media.token, operatorKey });
}

if (process.argv.includes('--serve')) {
  serve().catch((err) => {
    console.error(err);
    process.exit(1);
  });
  return;
}

// ================================ phone side (this process) ==================================
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const pem = (der) => `-----BEGIN CERTIFICATE-----\n${der.match(/.{1,64}/g).join('\n')}\n-----END CERTIFICATE-----\n`;

/** A TLS socket to the Secure Link origin through one broker stream (the phone's Reach route). */
async function reachSocket(cand) {
  const ws = new WebSocket(cand.broker.url, { perMessageDeflate: false });
  await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
  ws.send(
    JSON.stringify({
      type: 'register',
      protocol_version: 1,
      role: 'client',
      host_id: cand.broker.host_id,
      connection_id: randomBytes(16).toString('base64url'),
      credential_kind: 'bootstrap',
      token: cand.broker.token,
    }),
  );
  const first = await new Promise((r) => ws.once('message', (d) => r(JSON.parse(d.toString()))));
  if (first.type !== 'matched') throw new Error(`reach: ${first.code}`);
  const duplex = new Duplex({
    read() {},
    write(chunk, _e, cb) {
      ws.send(chunk, { binary: true }, cb);
    },
  });
  ws.on('message', (d, isBinary) => isBinary && duplex.push(d));
  ws.on('close', () => duplex.push(null));
  const sock = tls.connect({ socket: duplex, host: '127.0.0.1', ca: pem(cand.proxy.cert_der) });
  await new Promise((r, j) => (sock.once('secureConnect', r), sock.once('error', j)));
  return { sock, ws };
}

/**
 * The floor of the phone's side of any brokered route: the same pinned TLS to the Secure Link origin, but carried by a
 * JS stream over a plain TCP socket to it (what the Reach client does over its broker stream), no broker in between.
 */
async function jsStreamTlsSocket(proxy) {
  const { port } = new URL(proxy.url);
  const tcp = require('node:net').connect(Number(port), '127.0.0.1');
  await new Promise((r, j) => (tcp.once('connect', r), tcp.once('error', j)));
  const duplex = new Duplex({
    read() {},
    write(chunk, _e, cb) {
      tcp.write(chunk, cb);
    },
  });
  tcp.on('data', (d) => duplex.push(d));
  tcp.on('close', () => duplex.push(null));
  const sock = tls.connect({ socket: duplex, host: '127.0.0.1', ca: pem(proxy.cert_der) });
  await new Promise((r, j) => (sock.once('secureConnect', r), sock.once('error', j)));
  return { sock, ws: tcp, close: () => tcp.destroy() };
}

function request(agent, url, headers) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const mod = url.startsWith('https') ? https : http;
    const req = mod.get(url, { agent, headers }, (res) => {
      let n = 0;
      res.on('data', (c) => (n += c.length));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve({ ms: Number(process.hrtime.bigint() - t) / 1e6, bytes: n })
          : reject(new Error(`${url}: ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
  });
}

async function route(kind, server, child) {
  const mint = () => new Promise((r) => (child.once('message', (m) => r(m.qr)), child.send({ type: 'mint' })));
  const qr = await mint();
  const proxy = qr.endpoints.find((e) => e.role === 'plugin_proxy');
  const { PhoneSim } = require(path.join(DIST, 'phone-sim/src/phone-sim.js'));
  let wsOptions;
  let relayUrl = server.url;
  let held = null;
  if (kind === 'secure_link' || kind === 'sl_js_stream') {
    relayUrl = proxy.proxy.url.replace('https', 'wss') + '/relay/ws';
    wsOptions = { ca: pem(proxy.proxy.cert_der) };
  }
  if (kind === 'reach') {
    const r = await reachSocket(qr.endpoints.find((e) => e.role === 'outbound_broker'));
    held = r;
    relayUrl = 'wss://127.0.0.1/relay/ws';
    wsOptions = { createConnection: () => r.sock };
  }
  dbg(kind, 'phone connecting', relayUrl);
  const sim = await new PhoneSim({ relayUrl, code: qr.relay.code, deviceId: `bench-${kind}`, wsOptions }).start();
  dbg(kind, 'phone paired');
  // Device Control drives the phone the operator selected: this one.
  for (let i = 0; ; i++) {
    const sel = await fetch(`${server.url}/bridge/select-active`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-operator-key': server.operatorKey },
      body: JSON.stringify({ device_id: `bench-${kind}` }),
    });
    await sel.arrayBuffer();
    if (sel.status === 200) break;
    if (i > 100) throw new Error(`select-active ${sel.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  // The phone's media downloads: direct http, Secure Link https (keep-alive, pinned CA), or one more broker stream.
  let agent;
  let mediaUrl;
  let stream = null;
  if (kind === 'direct') {
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    mediaUrl = `${server.url}/media/${server.mediaToken}`;
  } else if (kind === 'secure_link') {
    agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: pem(proxy.proxy.cert_der) });
    mediaUrl = `${proxy.proxy.url}/relay/media/${server.mediaToken}`;
  } else if (kind === 'sl_js_stream') {
    stream = await jsStreamTlsSocket(proxy.proxy);
    agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    agent.createConnection = () => stream.sock;
    mediaUrl = `https://127.0.0.1/relay/media/${server.mediaToken}`;
  } else {
    const qr2 = await mint();
    stream = await reachSocket(qr2.endpoints.find((e) => e.role === 'outbound_broker'));
    agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    agent.createConnection = () => stream.sock;
    mediaUrl = `https://127.0.0.1/relay/media/${server.mediaToken}`;
  }
  return {
    sim,
    async ping() {
      const t = process.hrtime.bigint();
      const r = await fetch(`${server.url}/ping`, { headers: { authorization: `Bearer ${sim.token}` } });
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`/ping ${r.status}`);
      return Number(process.hrtime.bigint() - t) / 1e6;
    },
    download: () => request(agent, mediaUrl, { authorization: `Bearer ${sim.token}` }),
    close() {
      sim.stop?.();
      agent.destroy();
      if (stream?.close) stream.close();
      else stream?.ws.close();
      held?.ws.close();
    },
  };
}

(async () => {
  const child = fork(__filename, ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  process.on('exit', () => child.kill());
  dbg('starting server');
  const server = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  const kinds = ['direct', 'secure_link', 'sl_js_stream', 'reach'];
  const results = Object.fromEntries(kinds.map((k) => [k, { ping: [], dl: [] }]));
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? kinds : [...kinds].reverse();
    for (const kind of order) {
      const r = await route(kind, server, child);
      dbg(kind, 'route ready');
      for (let i = 0; i < 50; i++) await r.ping();
      const pings = [];
      for (let i = 0; i < PINGS; i++) pings.push(await r.ping());
      for (let i = 0; i < 10; i++) await r.download();
      const dls = [];
      for (let i = 0; i < DOWNLOADS; i++) dls.push((await r.download()).ms);
      r.close();
      await new Promise((res) => setTimeout(res, 200));
      results[kind].ping.push(pct(pings, 50));
      results[kind].dl.push(pct(dls, 50));
      console.log(
        `round ${round} ${kind.padEnd(12)} /ping p50 ${pct(pings, 50).toFixed(3)} ms p99 ${pct(pings, 99).toFixed(3)} ms | 1 MiB download p50 ${pct(dls, 50).toFixed(3)} ms`,
      );
    }
  }
  const med = (k, f) => pct(results[k][f], 50);
  console.log(`\nmedians of ${ROUNDS} rounds (${PINGS} pings, ${DOWNLOADS} downloads each):`);
  for (const k of kinds)
    console.log(
      `  ${k.padEnd(12)} /ping p50 ${med(k, 'ping').toFixed(3)} ms (${(med(k, 'ping') / med('direct', 'ping')).toFixed(2)}x direct) | download p50 ${med(k, 'dl').toFixed(3)} ms (${(med(k, 'dl') / med('direct', 'dl')).toFixed(2)}x direct, ${(1 / (med(k, 'dl') / 1000)).toFixed(0)} MiB/s)`,
    );
  child.send({ type: 'exit' });
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
