'use strict';
// `npm test`'s checks before jest: ESLint, Prettier, both type-checks and the build, in two lanes side by
// side (each is a single-threaded process and CI has two cores): ESLint alone (the longest, about as long
// as the other three together), and the rest one after another. One after another they took 138 s on a
// quiet machine; all four at once 117 s (they slowed each other); two lanes: see docs/BENCHMARKS.md.
// Each job's output is held and printed whole when it ends, so two jobs' lines never interleave; a job
// that fails does not stop the next in its lane, and the run fails after all ended (one failure does not
// hide another). `node scripts/checks.js lint check` runs only those jobs.
const { spawn } = require('node:child_process');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);

/** Each job: a name and its commands, run one after another (the build after nothing: it type-checks what it emits). */
const JOBS = [
  { name: 'eslint', steps: [[bin('eslint'), '.']] },
  { name: 'prettier', steps: [[bin('prettier'), '--check', '.']] },
  {
    name: 'check',
    steps: [
      [bin('tsc'), '--noEmit', '-p', 'tsconfig.json'],
      [bin('tsc'), '--noEmit', '-p', 'apps/console/tsconfig.json'],
    ],
  },
  { name: 'build', steps: [['npm', 'run', '-s', 'build']] },
];
const GROUPS = { lint: ['eslint', 'prettier'], check: ['check'], build: ['build'] };
/** The lanes, by job name: run side by side, each one job after another. */
const LANES = [['eslint'], ['prettier', 'check', 'build']];

/** Runs a job's steps in order; resolves with its exit code (the first non-zero), its output and its time. */
function runJob(job, cwd) {
  const started = Date.now();
  let out = '';
  const step = (i) =>
    new Promise((resolve) => {
      if (i >= job.steps.length) return resolve(0);
      const [cmd, ...args] = job.steps[i];
      out += `$ ${[path.basename(cmd), ...args].join(' ')}\n`;
      const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } });
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('error', (err) => {
        out += `${err.message}\n`;
        resolve(127);
      });
      child.on('close', (code, signal) => resolve(code === 0 ? step(i + 1) : (code ?? (signal ? 128 : 1))));
    });
  return step(0).then((code) => ({ name: job.name, code, out, seconds: (Date.now() - started) / 1000 }));
}

/** Runs the lanes side by side, each lane's jobs one after another; prints each job as it ends and a summary; resolves true when all passed. */
async function runChecks(lanes, { cwd = ROOT, write = (s) => process.stdout.write(s) } = {}) {
  const results = [];
  const runLane = async (jobs) => {
    for (const job of jobs) {
      const r = await runJob(job, cwd);
      write(`\n── ${r.name}: ${r.code === 0 ? 'passed' : `FAILED (exit ${r.code})`} in ${r.seconds.toFixed(1)} s\n${r.out}`);
      results.push(r);
    }
  };
  await Promise.all(lanes.map(runLane));
  const failed = results.filter((r) => r.code !== 0);
  write(`\nchecks: ${results.map((r) => `${r.name} ${r.code === 0 ? 'ok' : 'FAILED'} ${r.seconds.toFixed(0)} s`).join(', ')}\n`);
  return failed.length === 0;
}

module.exports = { JOBS, LANES, runChecks };

if (require.main === module) {
  const wanted = process.argv.slice(2).flatMap((g) => GROUPS[g] ?? [g]);
  const unknown = wanted.filter((n) => !JOBS.some((j) => j.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`checks: no job ${unknown.join(', ')} (jobs: ${JOBS.map((j) => j.name).join(', ')}; groups: lint, check, build)\n`);
    process.exit(2);
  }
  const lanes = LANES.map((lane) => lane.filter((n) => wanted.length === 0 || wanted.includes(n)).map((n) => JOBS.find((j) => j.name === n)));
  runChecks(lanes.filter((lane) => lane.length > 0)).then((ok) => process.exit(ok ? 0 : 1));
}
