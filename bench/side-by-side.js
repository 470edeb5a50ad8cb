'use strict';
// The side-by-side suite (issue 27): the relay, its floors (bare node:http + ws, bare fastify + ws, a minimal Nest 11
// app, a bare Node file server) and, given its checkout, the reference relay (Python aiohttp), each its own process,
// measured in one run with the subjects interleaved round by round; prints one table of medians and ratios (Markdown,
// to paste into docs/BENCHMARKS.md) and a `RESULT {json}` line.
//   node bench/side-by-side.js [--ref /path/to/hermes-relay] [--quick] [--rounds 3] [--duration 3] [--settle 20]
//                              [--sockets 2000] [--media-mb 512] [--json FILE]
// --quick: 1 round, 2 s loads, 5 s settle (at least), 300 sockets, 64 MiB (about 90 s on 2 cores). Needs `npm run build`,
// curl, and for --ref /usr/bin/python3 with aiohttp. The reference checkout may also come from SVC_BENCH_REF.
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const autocannon = require('autocannon');
const { ROOT, DIST, median } = require('./_lib');
const S = require('./_side-by-side-subjects');
const { table } = require('./_side-by-side-table');

const USAGE =
  'usage: node bench/side-by-side.js [--ref /path/to/hermes-relay] [--quick] [--rounds N] [--duration S] [--settle S] [--sockets N] [--media-mb MB] [--json FILE]';
let argv;
try {
  ({ values: argv } = parseArgs({
    options: {
      ref: { type: 'string' },
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      settle: { type: 'string' },
      sockets: { type: 'string' },
      'media-mb': { type: 'string' },
      json: { type: 'string' },
    },
  }));
} catch (err) {
  console.error(`side-by-side: ${err.message}\n${USAGE}`);
  process.exit(2);
}
const q = argv.quick;
const opt = (name, full, quick) => Number(argv[name] ?? (q ? quick : full));
const O = {
  rounds: opt('rounds', 3, 1),
  duration: opt('duration', 3, 2),
  settle: opt('settle', 20, 5), // at least; see settle() below
  sockets: opt('sockets', 2000, 300),
  mediaMb: opt('media-mb', 512, 64),
  connections: 50,
  ref: argv.ref ?? process.env.SVC_BENCH_REF ?? null,
};
for (const [k, v] of Object.entries(O)) if (typeof v === 'number' && !(v > 0)) fail(`--${k} must be a positive number`);
if (O.settle < 2) fail('--settle must be at least 2 (the first sample is taken at 2 s)');

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const rotate = (xs, r) => [...xs.slice(r % xs.length), ...xs.slice(0, r % xs.length)];

function fail(msg) {
  console.error(`side-by-side: ${msg}`);
  process.exit(2);
}

function preflight() {
  if (!fs.existsSync(path.join(DIST, 'apps/relay/src/cli/main.js'))) fail('the relay is not built (dist/ is missing); run "npm run build" first');
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
  } catch {
    fail('curl is needed for the media row (apt-get install -y curl)');
  }
  if (O.ref) {
    O.ref = path.resolve(O.ref);
    if (!fs.existsSync(path.join(O.ref, 'plugin/relay/server.py'))) fail(`--ref ${O.ref}: no plugin/relay/server.py there (a hermes-relay checkout)`);
    try {
      execFileSync(S.PYTHON, ['-c', 'import aiohttp'], { stdio: 'ignore' });
    } catch {
      fail(`--ref needs ${S.PYTHON} with aiohttp (apt-get install -y python3-aiohttp)`);
    }
  }
}

/** A warning when a TypeScript source is newer than the build (the figures would be of older code). */
function staleBuild() {
  const built = fs.statSync(path.join(DIST, 'apps/relay/src/cli/main.js')).mtimeMs;
  let newer = 0;
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== 'dist') walk(p);
      } else if (e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') && fs.statSync(p).mtimeMs > built) newer++;
    }
  };
  for (const d of ['apps/relay/src', 'libs']) if (fs.existsSync(path.join(ROOT, d))) walk(path.join(ROOT, d));
  return newer;
}

const git = (cwd) => {
  try {
    return execFileSync('git', ['describe', '--always', '--dirty'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};

function writeMediaFile(mb) {
  const dir = S.scratch('svc-sbs-media-');
  fs.chmodSync(dir, 0o755);
  const file = path.join(dir, 'big.bin');
  const block = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((i * 2654435761) >>> 0, i);
  const fd = fs.openSync(file, 'w', 0o644);
  for (let i = 0; i < mb; i++) fs.writeSync(fd, block);
  fs.closeSync(fd);
  return file;
}

// samples[measure][subject] = one value per round
const samples = {};
const put = (measure, kind, v) => ((samples[measure] ??= {})[kind] ??= []).push(v);

/**
 * The settled idle RSS (KiB) of a subject, and how many seconds after its first /health answer it was read. A Node
 * subject's RSS drops once when V8's memory reducer (`Mark-Compact (reduce)` in --trace-gc) gives back the young
 * generation start-up grew, and when that comes varies from run to run: bare fastify ~10 s in, the minimal Nest app
 * ~16 s, the relay 25-45 s (112 -> 83 MiB), on a busy machine up to 75 and 95 s. So after --settle s a Node subject is
 * watched until its RSS has fallen 1.5 MiB below the highest figure since 2 s (bare node:http drops 2 MiB), then read
 * 1.5 s later (a second, smaller reduce follows); at 120 s (quick: 60) it is read as it is, and a note says so. The
 * reference relay (CPython) has no such drop.
 */
const REDUCE_DROP_KIB = 1536;
const SETTLE_MAX_MS = q ? 60_000 : 120_000; // --quick stays under 3 minutes on a busy machine
async function settle(s, idleKiB) {
  await S.sleep(s.readyAt + O.settle * 1000 - Date.now());
  const read = () => ({ kib: S.rssKiB(s.pid), afterS: (Date.now() - s.readyAt) / 1000 });
  if (s.kind === 'reference') return read();
  for (let peak = idleKiB; ; await S.sleep(250)) {
    const kib = S.rssKiB(s.pid);
    if (kib <= peak - REDUCE_DROP_KIB) {
      await S.sleep(1500);
      return read();
    }
    if (Date.now() - s.readyAt > SETTLE_MAX_MS) {
      console.log(`\n  note: ${s.label}: no memory-reducer drop in ${SETTLE_MAX_MS / 1000} s; settled RSS read as it was`);
      return read();
    }
    peak = Math.max(peak, kib);
  }
}

/**
 * Footprint: each subject started one at a time (start -> first /health 200, RSS 2 s later), left idle together until
 * each has settled (above), then N authenticated idle sockets opened on each that has a phone socket (a reduce landing
 * while they open would make the RSS delta small or negative: -71 KiB a socket in one run before this wait).
 */
async function footprintRound(r, kinds) {
  const started = [];
  try {
    for (const kind of rotate(kinds, r)) {
      const s = await S.start(kind, { ref: O.ref, mediaMaxMb: O.mediaMb + 16 });
      started.push(s);
      put('startMs', kind, s.startMs);
      await S.sleep(2000);
      s.idleKiB = S.rssKiB(s.pid);
      put('idleMiB', kind, s.idleKiB / 1024);
    }
    for (const [s, settled] of await Promise.all(started.map(async (s) => [s, await settle(s, s.idleKiB)]))) {
      put('settledMiB', s.kind, settled.kib / 1024);
      put('settledAfterS', s.kind, settled.afterS);
    }
    for (const s of rotate(
      started.filter((x) => ['node', 'relay', 'reference'].includes(x.kind)),
      r,
    )) {
      try {
        const token = s.kind === 'node' ? 'x' : await S.pair(s);
        const before = S.rssKiB(s.pid);
        const socks = await S.openSockets(s, O.sockets, token);
        await S.sleep(1500);
        put('perSocketKiB', s.kind, (S.rssKiB(s.pid) - before) / O.sockets);
        for (const ws of socks) ws.terminate();
      } catch (err) {
        console.error(`  ${s.label}: RSS per socket not measured: ${err.message}`);
      }
    }
  } finally {
    await Promise.all(started.map(S.stop));
  }
}

/**
 * `GET /health` under autocannon: req/s and the server's CPU µs per request (/proc/<pid>/stat). Connection errors are
 * counted, not fatal: the relay's slow-connection guard (16 connections per address whose first request has not
 * arrived) resets a few of autocannon's 50 simultaneous connects from 127.0.0.1, and autocannon reconnects.
 */
async function health(s, seconds) {
  const before = S.cpuUs(s.pid);
  const res = await autocannon({ url: `${s.url}/health`, connections: O.connections, duration: seconds });
  const used = S.cpuUs(s.pid) - before;
  if (res.non2xx || !res.requests.total || res.errors > res.requests.total / 100)
    throw new Error(`${s.label}: GET /health under load: ${res.errors} errors, ${res.non2xx} non-2xx answers of ${res.requests.total}`);
  return { rps: res.requests.average, cpuUs: used / res.requests.total, errors: res.errors };
}

/** One client downloads the whole file with curl to /dev/null; MB/s (1e6 bytes) by curl's own clock. */
function download(url, headers, bytes) {
  return new Promise((resolve, reject) => {
    const args = ['-s', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_total}', ...headers.flatMap((h) => ['-H', h]), url];
    const p = spawn('curl', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.once('error', reject);
    p.once('close', () => {
      const [status, size, secs] = out.trim().split(' ').map(Number);
      if (status !== 200 || size !== bytes) reject(new Error(`${url}: HTTP ${status}, ${size} of ${bytes} bytes`));
      else resolve(size / 1e6 / secs);
    });
  });
}

/**
 * Load: fresh processes of the HTTP subjects; each warmed for --duration s (at least 2: a relay's CPU per request still
 * falls by half over its first seconds of load), then `GET /health` for --duration s in rotated order, its RSS read right after its own load; then the media file downloaded whole, once untimed, once timed.
 */
async function loadRound(r, kinds, file) {
  const started = [];
  try {
    for (const kind of rotate(kinds, r)) started.push(await S.start(kind, { ref: O.ref, file, mediaMaxMb: O.mediaMb + 16 }));
    const web = started.filter((s) => s.kind !== 'files');
    for (const s of web) await health(s, Math.max(2, O.duration));
    for (const s of web) {
      const h = await health(s, O.duration);
      put('healthRps', s.kind, h.rps);
      put('healthCpuUs', s.kind, h.cpuUs);
      put('healthErrors', s.kind, h.errors);
      put('rssAfterLoadMiB', s.kind, S.rssKiB(s.pid) / 1024);
    }
    const bytes = fs.statSync(file).size;
    const targets = [];
    for (const s of started) {
      if (s.kind === 'fastify') continue;
      const headers = s.kind === 'files' ? [] : [`Authorization: Bearer ${await S.pair(s)}`];
      targets.push({ s, url: await S.registerMedia(s, file), headers });
    }
    for (const t of targets) await download(t.url, t.headers, bytes);
    for (const t of targets) put('mediaMBps', t.s.kind, await download(t.url, t.headers, bytes));
  } finally {
    await Promise.all(started.map(S.stop));
  }
}

async function main() {
  preflight();
  const loadStart = load();
  const stale = staleBuild();
  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    python: O.ref ? execFileSync(S.PYTHON, ['--version'], { encoding: 'utf8' }).trim() : null,
    cpus: os.cpus().length,
    commit: git(ROOT),
    refCommit: O.ref ? git(O.ref) : null,
  };
  console.log(
    `side-by-side ${meta.date}, node ${meta.node}${meta.python ? `, ${meta.python}` : ''}, ${meta.cpus} CPUs, svc ${meta.commit}` +
      `${O.ref ? `, reference ${O.ref} at ${meta.refCommit}` : ''}; load average at start ${loadStart}`,
  );
  console.log(
    `rounds ${O.rounds}, autocannon -c ${O.connections} -d ${O.duration}, settle ${O.settle} s, ${O.sockets} sockets, media ${O.mediaMb} MiB` +
      (O.ref ? '' : '; no reference relay (pass --ref /path/to/hermes-relay)'),
  );
  if (stale) console.log(`warning: ${stale} TypeScript sources are newer than dist/: run "npm run build" to measure the current code`);

  const refKinds = O.ref ? ['reference'] : [];
  const footprintKinds = ['node', 'fastify', 'nest', 'relay', ...refKinds];
  const loadKinds = ['fastify', 'files', 'relay', ...refKinds];
  const file = writeMediaFile(O.mediaMb);
  // One untimed start of each (page cache, Python's bytecode cache), so no first round pays for a cold disk.
  for (const kind of footprintKinds) await S.stop(await S.start(kind, { ref: O.ref }));

  const t0 = Date.now();
  for (let r = 0; r < O.rounds; r++) {
    process.stdout.write(`round ${r + 1}/${O.rounds}: footprint`);
    await footprintRound(r, footprintKinds);
    process.stdout.write(', load and media');
    await loadRound(r, loadKinds, file);
    console.log(` (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }

  const medians = Object.fromEntries(
    Object.entries(samples).map(([m, bySubject]) => [m, Object.fromEntries(Object.entries(bySubject).map(([k, xs]) => [k, median(xs)]))]),
  );
  const { text, ratios } = table(medians, samples, O);
  console.log(`\n${text}`);
  const after = Object.entries(medians.settledAfterS ?? {}).map(([k, v]) => `${S.LABELS[k]} ${v.toFixed(0)}`);
  if (after.length) console.log(`\nsettled RSS read after (s from the first /health, median): ${after.join(', ')}`);
  for (const [kind, errs] of Object.entries(samples.healthErrors ?? {}))
    if (errs.some(Boolean))
      console.log(`note: ${S.LABELS[kind]}: connection errors under the /health load, by round: ${errs.join(' / ')} (autocannon reconnects)`);
  const loadEnd = load();
  console.log(`\nload average at end ${loadEnd}; measured in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  const result = { ...meta, loadavg: { start: loadStart, end: loadEnd }, options: O, samples, medians, ratios };
  if (argv.json) fs.writeFileSync(argv.json, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`RESULT ${JSON.stringify(result)}`);
}

main().catch((err) => {
  console.error(`side-by-side: ${err.stack || err}`);
  process.exit(1);
});
