'use strict';
/**
 * What sealing personal content costs (issue 26): the same paths on two relays in one process, one
 * sealing (the default) and one writing that content in plain text (createRelay's sealPersonal: false, a
 * benchmark-only switch), rounds interleaved:
 *   1. notifications: one phone pushes N notification.posted frames (pipelined) until every
 *      notification.ok came back (each one fsynced event whose title and text are sealed). The phone's
 *      data key for the hour is made by the warm-up (a key is made once per device and hour); the
 *      per-device event budget is lifted for the bench (300 at once, 5 a second would stop it);
 *   2. Thread post: POST /phone/message with nobody subscribed, one after another (sealed under the host's key).
 * Needs the compiled relay: npm run build.  Usage: node bench/personal-data.js [rounds=15] [n=250]
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Writable } = require('node:stream');
const WebSocket = require('ws');
const { createRelay } = require('../dist/apps/relay/src/relay.js');
const { loadConfig } = require('../dist/apps/relay/src/common/config/config.js');

const ROUNDS = Number(process.argv[2] || 15);
const N = Number(process.argv[3] || 250);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const TEXT = 'Your one-time code is 482913. It expires in 10 minutes. Do not share it with anyone, not even us. '.repeat(2);

async function start(seal) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `svc-bench-personal-${seal ? 'sealed' : 'plain'}-`));
  const env = { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR', PHONE_ENABLED: '1', PHONE_QUEUE_MAX: '100000' };
  const relay = await createRelay({ config: loadConfig(env), logDestination: new Writable({ write: (_c, _e, cb) => cb() }), sealPersonal: seal });
  relay.loop.admission = (events) => relay.disk.admit(events);
  return { relay, home, seal, paired: 0, phone: null };
}

function post(url, p, body) {
  return fetch(url + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.arrayBuffer());
}

/** A new paired phone, authenticated on its socket. */
async function phone(r) {
  const code = `P${r.seal ? 'S' : 'C'}${(r.paired++).toString(36).toUpperCase().padStart(4, '0')}`;
  await post(r.relay.url, '/pairing/register', { code });
  const ws = new WebSocket(r.relay.url.replace(/^http/, 'ws') + '/ws');
  await new Promise((res, rej) => (ws.once('open', res), ws.once('error', rej)));
  const frames = [];
  let wake = null;
  ws.on('message', (d) => {
    frames.push(JSON.parse(d.toString()));
    wake?.();
  });
  const until = async (pred) => {
    for (;;) {
      const i = frames.findIndex(pred);
      if (i >= 0) return frames.splice(i, 1)[0];
      await new Promise((res) => (wake = res));
    }
  };
  ws.send(JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { pairing_code: code, device_name: 'bench', device_id: code } }));
  await until((f) => f.type === 'auth.ok');
  return { ws, frames, until };
}

async function notifications(r) {
  const p = (r.phone ??= await phone(r));
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++)
    p.ws.send(
      JSON.stringify({
        channel: 'notifications',
        type: 'notification.posted',
        id: `n${i}`,
        payload: { package_name: 'com.bank', title: `Code ${i}`, text: TEXT, key: `k${i}` },
      }),
    );
  let acks = 0;
  while (acks < N) {
    await p.until((f) => f.type === 'notification.ok');
    acks++;
  }
  return (N * 1000) / ms(t0);
}

async function threadPosts(r) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await post(r.relay.url, '/phone/message', { chat_id: 'bench', text: TEXT });
  return (N * 1000) / ms(t0);
}

async function main() {
  const sealed = await start(true);
  const plain = await start(false);
  const results = { notifications: { sealed: [], plain: [] }, threads: { sealed: [], plain: [] } };
  try {
    await notifications(sealed); // warm-up, not counted
    await notifications(plain);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [plain, sealed] : [sealed, plain];
      for (const r of order) results.notifications[r.seal ? 'sealed' : 'plain'].push(await notifications(r));
      for (const r of order) results.threads[r.seal ? 'sealed' : 'plain'].push(await threadPosts(r));
    }
    const dump = fs
      .readdirSync(path.join(sealed.home, 'relay', 'events'))
      .map((f) => fs.readFileSync(path.join(sealed.home, 'relay', 'events', f), 'utf8'))
      .join('');
    if (dump.includes('482913')) throw new Error('the sealed relay wrote the text in plain text');
    console.log(`rounds: ${ROUNDS} x ${N} (interleaved, sealed and plain relays in one process), node ${process.version}, ${os.cpus().length} cores`);
    for (const [name, r] of Object.entries(results)) {
      const a = median(r.sealed);
      const b = median(r.plain);
      console.log(
        `${name.padEnd(14)} sealed median ${a.toFixed(0).padStart(6)} /s   plain median ${b.toFixed(0).padStart(6)} /s   ratio ${(a / b).toFixed(2)}x`,
      );
    }
  } finally {
    for (const r of [sealed, plain]) {
      r.phone?.ws.close();
      await r.relay.close('bench done');
      fs.rmSync(r.home, { recursive: true, force: true });
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
