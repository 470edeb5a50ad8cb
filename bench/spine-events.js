'use strict';
// Issue 2: durable events per second through CommandLoop.run (the relay's command loop: decide against the
// read models, append with group commit, fdatasync, apply, publish) under concurrent pair/revoke
// commands, against a raw append + fdatasync baseline that replays exactly the same batches (the same
// write sizes in the same order, one fdatasync per batch) with the same I/O calls on the same disk.
//   node bench/spine-events.js [--seconds 3] [--clients 256] [--rounds 2]
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { dist, median, tempDir, fmt, report } = require('./_lib');

const { fileStore } = dist('apps/relay/src/common/loop/file-store.js');
const { Secrets } = dist('apps/relay/src/common/auth/secrets.js');
const { openLoop, pairRevokeCycle } = require('./_workload');
const { FileEventStore } = dist('libs/events/src/index.js');

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    clients: { type: 'string', default: '1,16,256' },
    rounds: { type: 'string', default: '2' },
    'cpu-only': { type: 'boolean', default: false },
  },
});
const SECONDS = Number(values.seconds);
const LEVELS = values.clients.split(',').map(Number);
const ROUNDS = Number(values.rounds);
// --cpu-only: fdatasync answers at once, so the figure is the relay's CPU cost per event, not the disk's.
const CPU_ONLY = values['cpu-only'];

// Count what the store does: every batch is one fs.writeSync (or a few, for a short write) to the page
// cache, then one async fdatasync.
const io = { writes: [], syncs: 0, on: false };
const realWriteSync = fs.writeSync;
const realSync = fs.fdatasync;
fs.writeSync = function (fd, buf, off, len, ...rest) {
  if (io.on && typeof len === 'number') io.writes.push(len); // (a snapshot is one writeSync of a string)
  return realWriteSync.call(fs, fd, buf, off, len, ...rest);
};
fs.fdatasync = function (fd, cb) {
  if (io.on) io.syncs++;
  if (CPU_ONLY) return setImmediate(cb, null);
  return realSync.call(fs, fd, cb);
};

async function relayRound(CLIENTS) {
  const dir = tempDir('svc-bench-events-');
  const secrets = Secrets.load(dir);
  const log = await openLoop(fileStore(dir, 64 << 20), secrets);
  io.writes = [];
  io.syncs = 0;
  io.on = true;
  const start = process.hrtime.bigint();
  const stopAt = Date.now() + SECONDS * 1000;
  let commands = 0;
  const cpu0 = process.cpuUsage();
  const client = async () => {
    while (Date.now() < stopAt) {
      const [a, b, c] = await pairRevokeCycle(log, secrets);
      commands += 3;
      if (!SAMPLE) SAMPLE = [a, b, c].map((batch) => ({ actor: batch[0].actor, events: batch.map((e) => ({ type: e.type, data: e.data })) }));
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  await log.drain();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  io.on = false;
  const events = log.lastSeq; // every durable event of this round (the log starts empty)
  const cpu = process.cpuUsage(cpu0);
  await log.close();
  const bytes = fs.readdirSync(path.join(dir, 'events')).reduce((n, f) => n + fs.statSync(path.join(dir, 'events', f)).size, 0);
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    events,
    seconds,
    eps: events / seconds,
    commands,
    writes: [...io.writes],
    syncs: io.syncs,
    bytes,
    cpuUs: (cpu.user + cpu.system) / events,
  };
}

/** One pair/revoke cycle's events, as the relay decided them: the store-only round appends exactly these. */
let SAMPLE = null;

/**
 * The hash-chained store alone (encode, SHA-256 chain, group commit, fdatasync), with the same clients
 * appending the relay's own events and no decisions or read models: how much of the relay's cost per
 * event is the log itself.
 */
async function storeRound(CLIENTS) {
  const dir = tempDir('svc-bench-store-');
  const store = new FileEventStore({ dir, onDurable: () => undefined });
  await store.open({ fromSeq: 1 });
  io.writes = [];
  io.syncs = 0;
  io.on = true;
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  const stopAt = Date.now() + SECONDS * 1000;
  const client = async () => {
    while (Date.now() < stopAt) {
      for (const cmd of SAMPLE) await store.append(cmd.events, new Date().toISOString(), cmd.actor).durable;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  await store.drain();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  io.on = false;
  const events = store.lastSeq;
  const cpu = process.cpuUsage(cpu0);
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { events, seconds, eps: events / seconds, writes: [...io.writes], syncs: io.syncs, cpuUs: (cpu.user + cpu.system) / events };
}

/** The same batches, raw, with the store's I/O calls: writeSync each batch's bytes, await fdatasync, next. */
async function baselineRound(writes, events) {
  const dir = tempDir('svc-bench-raw-');
  const fd = fs.openSync(path.join(dir, 'raw.jsonl'), 'a', 0o600);
  const maxLen = Math.max(...writes);
  const buf = Buffer.alloc(maxLen, 'x');
  const start = process.hrtime.bigint();
  for (const len of writes) {
    realWriteSync.call(fs, fd, buf, 0, len, null);
    await new Promise((resolve, reject) => realSync.call(fs, fd, (err) => (err ? reject(err) : resolve())));
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  fs.closeSync(fd);
  fs.rmSync(dir, { recursive: true, force: true });
  return { seconds, eps: events / seconds };
}

(async () => {
  const rows = [
    [
      'clients',
      'svc relay events/s (median)',
      'raw, same batches',
      'ratio',
      'store alone (ratio to its raw)',
      'CPU µs/event relay / store',
      'events/batch',
      'rounds (relay / raw)',
    ],
  ];
  const results = [];
  for (const clients of LEVELS) {
    const relay = [];
    const raw = [];
    const store = [];
    const storeRaw = [];
    for (let round = 0; round < ROUNDS; round++) {
      const r = await relayRound(clients);
      relay.push(r);
      raw.push(CPU_ONLY ? { eps: NaN } : await baselineRound(r.writes, r.events));
      const st = await storeRound(clients);
      store.push(st);
      storeRaw.push(CPU_ONLY ? { eps: NaN } : await baselineRound(st.writes, st.events));
    }
    const eps = median(relay.map((r) => r.eps));
    const rawEps = median(raw.map((r) => r.eps));
    const storeEps = median(store.map((r) => r.eps));
    const storeRatio = median(store.map((r, i) => r.eps / storeRaw[i].eps));
    const perBatch = median(relay.map((r) => r.events / r.syncs));
    const ratio = eps / rawEps;
    const cpuRelay = median(relay.map((r) => r.cpuUs));
    const cpuStore = median(store.map((r) => r.cpuUs));
    results.push({
      clients,
      eps,
      rawEps,
      ratio,
      storeEps,
      storeRatio,
      cpuUsPerEvent: cpuRelay,
      storeCpuUsPerEvent: cpuStore,
      eventsPerBatch: perBatch,
    });
    rows.push([
      clients,
      fmt(eps) + (eps >= 5000 ? ' (>= 5,000 ok)' : ' (< 5,000)'),
      CPU_ONLY ? '-' : fmt(rawEps),
      CPU_ONLY ? '-' : `${ratio.toFixed(2)} ${ratio >= 0.8 ? 'ok' : 'MISSED'} (>= 0.8)`,
      fmt(storeEps) + (CPU_ONLY ? '' : ` (${storeRatio.toFixed(2)})`),
      `${cpuRelay.toFixed(1)} / ${cpuStore.toFixed(1)}`,
      perBatch.toFixed(1),
      relay.map((r) => fmt(r.eps)).join(' / ') + (CPU_ONLY ? '' : '  |  ' + raw.map((r) => fmt(r.eps)).join(' / ')),
    ]);
  }
  report(
    `durable events/s: concurrent pair/revoke through CommandLoop.run, ${SECONDS} s x ${ROUNDS} rounds per level${CPU_ONLY ? ' (--cpu-only: fdatasync stubbed)' : ''}`,
    rows,
  );
  console.log(`\nRESULT ${JSON.stringify(results)}`);
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
