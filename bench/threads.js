'use strict';
/**
 * Phone Threads costs, each beside its bare baseline in the same run (rounds interleaved):
 *   1. post-to-phone: POST /phone/message to a subscribed phone, until the phone has the frame,
 *      against a system/ping -> pong round trip on the same socket (the socket's own floor);
 *   2. queued post: POST /phone/message with nobody subscribed (one fsynced event), against GET /health
 *      (no event) and against POST /pairing/register (also one fsynced event: the log's own floor);
 *   3. backlog flush: N queued messages to a new subscriber until proactive.backlog.complete (per message).
 * Needs the compiled relay: npx tsc -p tsconfig.build.json && npx tsc-alias -p tsconfig.build.json
 * Usage: node bench/threads.js [rounds=400]
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Writable } = require('node:stream');
const WebSocket = require('ws');
const { createRelay } = require('../dist/apps/relay/src/relay.js');
const { loadConfig } = require('../dist/apps/relay/src/common/config/config.js');

const ROUNDS = Number(process.argv[2] || 400);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

class Client {
  constructor(ws) {
    this.ws = ws;
    this.waiters = [];
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString());
      const i = this.waiters.findIndex((w) => w.match(f));
      if (i >= 0) this.waiters.splice(i, 1)[0].resolve(f);
    });
  }
  static open(url) {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + '/ws');
    return new Promise((res, rej) => {
      ws.once('open', () => res(new Client(ws)));
      ws.once('error', rej);
    });
  }
  wait(match) {
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
  send(channel, type, payload, id) {
    this.ws.send(JSON.stringify({ channel, type, id, payload }));
  }
}

async function main() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-threads-'));
  const env = { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR', PHONE_ENABLED: '1', PHONE_QUEUE_MAX: '100000' };
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const relay = await createRelay({ config: loadConfig(env), logDestination: sink });
  const url = relay.url;
  const json = (p, body) => fetch(url + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  try {
    await json('/pairing/register', { code: 'BENCH1' });
    const phone = await Client.open(url);
    const ok = phone.wait((f) => f.type === 'auth.ok');
    phone.send('system', 'auth', { pairing_code: 'BENCH1', device_name: 'bench', device_id: 'bench' }, 'a');
    const token = (await ok).payload.session_token;

    // 1. post-to-phone vs ping/pong
    let sub = phone.wait((f) => f.type === 'proactive.backlog.complete');
    phone.send('proactive', 'proactive.subscribe', {}, 's');
    await sub;
    const deliver = [];
    const ping = [];
    for (let i = 0; i < ROUNDS; i++) {
      let t0 = process.hrtime.bigint();
      const pong = phone.wait((f) => f.type === 'pong' && f.id === `p${i}`);
      phone.send('system', 'ping', { ts: i }, `p${i}`);
      await pong;
      ping.push(ms(t0));
      t0 = process.hrtime.bigint();
      const got = phone.wait((f) => f.type === 'phone.message' && f.payload.message_id === `d${i}`);
      const res = await json('/phone/message', { chat_id: 'bench', text: `message ${i}`, message_id: `d${i}` });
      await res.arrayBuffer();
      await got;
      deliver.push(ms(t0));
    }

    // 2. queued post vs GET /health (nobody subscribed)
    const done = phone.wait((f) => f.type === 'proactive.unsubscribed');
    phone.send('proactive', 'proactive.unsubscribe', {}, 'u');
    await done;
    const queued = [];
    const health = [];
    const register = [];
    for (let i = 0; i < ROUNDS; i++) {
      let t0 = process.hrtime.bigint();
      await (await fetch(url + '/health')).arrayBuffer();
      health.push(ms(t0));
      t0 = process.hrtime.bigint();
      await (await json('/pairing/register', { code: 'B' + i.toString(36).toUpperCase().padStart(5, '0') })).arrayBuffer();
      register.push(ms(t0));
      t0 = process.hrtime.bigint();
      await (await json('/phone/message', { chat_id: 'bench', text: `queued ${i}`, message_id: `q${i}` })).arrayBuffer();
      queued.push(ms(t0));
    }

    // 3. flush the ROUNDS queued messages to a fresh subscriber
    const again = await Client.open(url);
    const ok2 = again.wait((f) => f.type === 'auth.ok');
    again.send('system', 'auth', { session_token: token }, 'a2');
    await ok2;
    const t0 = process.hrtime.bigint();
    sub = again.wait((f) => f.type === 'proactive.backlog.complete');
    again.send('proactive', 'proactive.subscribe', {}, 's2');
    const complete = await sub;
    const flushMs = ms(t0);

    const row = (name, a, b, baseName) =>
      console.log(
        `${name.padEnd(34)} median ${median(a).toFixed(3)} ms   ${baseName.padEnd(22)} median ${median(b).toFixed(3)} ms   ratio ${(median(a) / median(b)).toFixed(2)}x`,
      );
    console.log(`rounds: ${ROUNDS} (interleaved with the baseline), node ${process.version}, ${os.cpus().length} cores`);
    row('post to subscribed phone', deliver, ping, 'ws ping/pong');
    row('post to subscribed phone', deliver, register, 'POST /pairing/register');
    row('post, queued (no subscriber)', queued, health, 'GET /health');
    row('post, queued (no subscriber)', queued, register, 'POST /pairing/register');
    console.log(
      `backlog flush of ${complete.payload.count} messages: ${flushMs.toFixed(1)} ms (${((flushMs * 1000) / complete.payload.count).toFixed(1)} us per message)`,
    );
    phone.ws.close();
    again.ws.close();
  } finally {
    await relay.close('bench done');
    fs.rmSync(home, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
