'use strict';
// Witnessing one new checkpoint, the two ways (issue 39): a witness that pulls (`svc relay witness --relay`:
// GET /log/checkpoint, GET /log/proof/consistency, cosign, POST /log/cosignature) against the relay pushing
// to a witness that serves C2SP tlog-witness (`--listen`: one POST /add-checkpoint with the proof, the
// cosignature verified and kept by the relay). Each round the log grows by one pairing first, so every
// round witnesses a new tree; the relay, both witnesses and this process share one event loop (a relay
// and a witness on one host), on the real clock. Medians, and push against pull side by side.
//   node bench/witness.js [--rounds 200]
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { dist, median, tempDir, fmt, report } = require('./_lib');

const { createRelay } = dist('apps/relay/src/relay.js');
const { loadConfig } = dist('apps/relay/src/common/config/config.js');
const { openWitnessHome, witnessOnce } = dist('apps/relay/src/transparency/witness-run.js');
const { serveWitness, SerialLock } = dist('apps/relay/src/transparency/witness-serve.js');
const { WitnessPushService } = dist('apps/relay/src/transparency/witness-push.service.js');
const { logIdentity } = dist('apps/relay/src/transparency/log-identity.js');
const { parseVkey } = dist('libs/events/src/merkle/note.js');

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '200' } } });
const ROUNDS = Number(values.rounds);

async function main() {
  const home = tempDir('svc-bench-witness-');
  const pullHome = openWitnessHome(tempDir('svc-bench-witness-pull-'), 'bench.witness/pull');
  const pushHome = openWitnessHome(tempDir('svc-bench-witness-push-'), 'bench.witness/push');
  const log = logIdentity(home);
  const server = await serveWitness({
    home: pushHome,
    log: parseVkey(log.vkey),
    host: '127.0.0.1',
    port: 0,
    lock: new SerialLock(),
    now: () => Math.floor(Date.now() / 1000),
    onOutcome: () => undefined,
  });
  const env = {
    SVC_HOME: home,
    RELAY_HOST: '127.0.0.1',
    RELAY_PORT: '0',
    RELAY_LOG_LEVEL: 'ERROR',
    RELAY_CHECKPOINT_PUBLISH_SECONDS: '0',
    RELAY_WITNESS_VKEYS: `${pullHome.vkey} ${pushHome.vkey}`,
    RELAY_WITNESS_URLS: `bench.witness/push=${server.url}`,
  };
  // The scheduler's own ticks stay out of the way: this bench starts each submission itself.
  const relay = await createRelay({ config: { ...loadConfig(env), sweepIntervalMs: 3_600_000 } });
  const push = relay.app.get(WitnessPushService);
  const operator = { 'x-operator-key': fs.readFileSync(path.join(home, 'relay', 'operator.key'), 'utf8').trim() };
  let n = 0;
  const grow = async () => {
    const code = `W${String(++n).padStart(5, '0')}`;
    const r = await fetch(`${relay.url}/pairing/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...operator },
      body: JSON.stringify({ code }),
    });
    if (r.status !== 200) throw new Error(`pairing/register: ${r.status} ${await r.text()}`);
    await relay.loop.drain();
  };
  const pullMs = [];
  const pushMs = [];
  for (let i = 0; i < ROUNDS; i++) {
    await grow();
    let t = performance.now();
    const out = await witnessOnce(pullHome, relay.url, log.vkey, Math.floor(Date.now() / 1000));
    pullMs.push(performance.now() - t);
    if (!out.ok || !out.submitted) throw new Error(`pull round: ${JSON.stringify(out)}`);
    await grow();
    t = performance.now();
    push.tick();
    await push.settled();
    pushMs.push(performance.now() - t);
    const st = push.state('bench.witness/push');
    if (st.state !== 'ok') throw new Error(`push: ${JSON.stringify(st)}`);
  }
  const size = relay.loop.lastSeq;
  await relay.close('bench done');
  await server.close();
  for (const d of [home, pullHome.dir, pushHome.dir]) fs.rmSync(d, { recursive: true, force: true });
  const p = median(pullMs);
  const q = median(pushMs);
  report(`Witnessing one new checkpoint (${ROUNDS} rounds each, log grown to ${fmt(size)} records)`, [
    ['way', 'median ms', 'p90 ms', 'vs pull'],
    ['pull: svc relay witness --relay (3 requests)', fmt(p, 2), fmt(pct(pullMs, 0.9), 2), '1.00x'],
    ['push: relay to witness --listen (1 request)', fmt(q, 2), fmt(pct(pushMs, 0.9), 2), `${fmt(q / p, 2)}x`],
  ]);
}

function pct(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
