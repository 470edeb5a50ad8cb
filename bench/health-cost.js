'use strict';
// Issue 27: what a `GET /health` costs the relay, layer by layer against bare Fastify. Every subject runs at once,
// pinned to CPU 0 (taskset), the load (autocannon, 50 connections) runs here pinned to CPU 1; the subjects take their
// load in short windows, in turn, the order reversed every window, so a slow spell of this shared machine falls on all
// of them alike. Each window gives the subject's CPU time per request (/proc/<pid>/stat, every thread); a row shows the
// median over the windows, and its ratios are of those medians.
//   node bench/health-cost.js [--windows 16] [--seconds 2] [--no-pin]
// Subjects: bare fastify ({status:'ok'}), then each layer adding one thing the relay has (bench/_footprint-servers.js),
// then the relay itself (`bin/svc relay start`). Needs `npm run build`.
const os = require('node:os');
const { parseArgs } = require('node:util');
const autocannon = require('autocannon');
const { median } = require('./_lib');
const S = require('./_side-by-side-subjects');

const USAGE = 'usage: node bench/health-cost.js [--windows N] [--seconds S] [--no-pin]';
let argv;
try {
  ({ values: argv } = parseArgs({
    options: { windows: { type: 'string', default: '16' }, seconds: { type: 'string', default: '2' }, 'no-pin': { type: 'boolean', default: false } },
  }));
} catch (err) {
  console.error(`health-cost: ${err.message}\n${USAGE}`);
  process.exit(2);
}
const windows = Number(argv.windows);
const seconds = Number(argv.seconds);
if (!(windows >= 2) || !(seconds >= 1)) {
  console.error(`health-cost: --windows must be >= 2 and --seconds >= 1\n${USAGE}`);
  process.exit(2);
}
const pin = !argv['no-pin'] && os.cpus().length >= 2 && require('node:fs').existsSync('/usr/bin/taskset');
const KINDS = ['fastify', 'fastify-body', 'nest-body', 'nest-hooks', 'nest-multipart', 'relay'];

async function main() {
  if (pin) require('node:child_process').execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  const subjects = [];
  for (const kind of KINDS) subjects.push(await S.start(kind, pin ? { cpu: 0 } : {}));
  const load = (s, duration) => autocannon({ url: `${s.url}/health`, connections: 50, duration });
  for (const s of subjects) await load(s, 3); // warm: the JIT, the relay's first sweeps
  const us = new Map(subjects.map((s) => [s, []]));
  const rps = new Map(subjects.map((s) => [s, []]));
  for (let w = 0; w < windows; w++) {
    for (const s of w % 2 ? [...subjects].reverse() : subjects) {
      const before = S.cpuUs(s.pid);
      const r = await load(s, seconds);
      if (r.non2xx) throw new Error(`${s.label}: ${r.non2xx} non-2xx answers`);
      us.get(s).push((S.cpuUs(s.pid) - before) / r.requests.total);
      rps.get(s).push(r.requests.average);
    }
    process.stderr.write(`window ${w + 1}/${windows}\r`);
  }
  for (const s of subjects) await S.stop(s);
  const [bare, body] = subjects;
  const ratio = (s, to) => median(us.get(s)) / median(us.get(to));
  console.log(
    `health-cost ${new Date().toISOString().slice(0, 16)}Z, node ${process.version}, ${windows} windows of ${seconds} s, ` +
      `${pin ? 'subjects on CPU 0, load on CPU 1' : 'not pinned'}, load average ${os.loadavg()[0].toFixed(2)}\n`,
  );
  console.log('| subject | CPU µs / request | req/s | vs bare fastify | vs the same body |');
  console.log('|---|---:|---:|---:|---:|');
  for (const s of subjects)
    console.log(
      `| ${s.label} | ${median(us.get(s)).toFixed(1)} | ${Math.round(median(rps.get(s))).toLocaleString('en')} | ` +
        `${ratio(s, bare).toFixed(2)}x | ${s === bare ? '' : `${ratio(s, body).toFixed(2)}x`} |`,
    );
  const result = Object.fromEntries(subjects.map((s) => [s.kind, { cpuUs: median(us.get(s)), rps: median(rps.get(s)), vsBare: ratio(s, bare) }]));
  console.log(`\nRESULT ${JSON.stringify(result)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
