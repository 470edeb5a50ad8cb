'use strict';
/**
 * Phone socket frame throughput: pipelined system/ping → system/pong round trips over one authenticated
 * socket of the real relay (auth check, per-connection queue, envelope validation, last-seen touch),
 * against a bare `ws` server that parses the same envelope and answers the same pong, in the same run.
 *
 *   npx tsc -p tsconfig.build.json && npx tsc-alias -p tsconfig.build.json && node bench/phone-socket.js
 *
 * Env: FRAMES (per round, default 5000), ROUNDS (default 7).
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const WebSocket = require('ws');
const pino = require('pino');
const { createRelay } = require('../dist/apps/relay/src/relay.js');
const { loadConfig } = require('../dist/apps/relay/src/common/config/config.js');

const FRAMES = Number(process.env.FRAMES || 5000);
const ROUNDS = Number(process.env.ROUNDS || 7);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function open(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** Sends FRAMES pings back to back and resolves with frames/s once every pong is in. */
function round(ws) {
  return new Promise((resolve) => {
    let got = 0;
    const t0 = process.hrtime.bigint();
    const onMessage = (data) => {
      const f = JSON.parse(data.toString());
      if (f.type !== 'pong') return;
      if (++got === FRAMES) {
        ws.off('message', onMessage);
        resolve(FRAMES / (Number(process.hrtime.bigint() - t0) / 1e9));
      }
    };
    ws.on('message', onMessage);
    for (let i = 0; i < FRAMES; i++) ws.send(JSON.stringify({ channel: 'system', type: 'ping', id: `p${i}`, payload: { ts: i } }));
  });
}

async function bareServer() {
  const wss = new WebSocket.Server({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise((r) => wss.once('listening', r));
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const env = JSON.parse(data.toString());
      if (typeof env.channel !== 'string' || typeof env.type !== 'string') return;
      ws.send(JSON.stringify({ channel: 'system', type: 'pong', id: env.id, payload: { ts: env.payload.ts } }));
    });
  });
  return { url: `ws://127.0.0.1:${wss.address().port}/ws`, close: () => new Promise((r) => wss.close(r)) };
}

async function relayServer() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  // The per-socket frame cap (RELAY_SOCKET_FRAMES_PER_SECOND, 200 after a burst of 2000) paces a flood by design;
  // lifted here so the bench measures what each frame costs, not the cap (FRAME_CAP=1 keeps the defaults).
  const lift = process.env.FRAME_CAP === '1' ? {} : { RELAY_SOCKET_FRAMES_PER_SECOND: '1000000', RELAY_SOCKET_FRAME_BURST: '10000000' };
  const config = { ...loadConfig({ SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR', ...lift }) };
  const relay = await createRelay({ config, logDestination: pino.destination('/dev/null') });
  const code = 'BENCH1';
  const res = await fetch(`${relay.url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (res.status !== 200) throw new Error(`register: ${res.status}`);
  return {
    url: relay.url.replace('http', 'ws') + '/ws',
    async auth(ws) {
      const ok = new Promise((resolve) => ws.once('message', (d) => resolve(JSON.parse(d.toString()))));
      ws.send(JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { pairing_code: code, device_id: 'bench' } }));
      const f = await ok;
      if (f.type !== 'auth.ok') throw new Error(`auth: ${JSON.stringify(f)}`);
    },
    async close() {
      await relay.close();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

async function main() {
  const bare = await bareServer();
  const relay = await relayServer();
  const bareWs = await open(bare.url);
  const relayWs = await open(relay.url);
  await relay.auth(relayWs);
  await round(bareWs); // warm-up
  await round(relayWs);
  const b = [];
  const r = [];
  for (let i = 0; i < ROUNDS; i++) {
    // Interleaved, so load from other processes hits both sides alike.
    b.push(await round(bareWs));
    r.push(await round(relayWs));
  }
  bareWs.close();
  relayWs.close();
  await bare.close();
  await relay.close();
  const mb = median(b);
  const mr = median(r);
  console.log(`phone socket ping round trips, ${FRAMES} pipelined frames x ${ROUNDS} rounds (median frames/s)`);
  console.log(`  bare ws server : ${Math.round(mb)}`);
  console.log(`  relay /ws      : ${Math.round(mr)}`);
  console.log(`  ratio          : ${(mr / mb).toFixed(2)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
