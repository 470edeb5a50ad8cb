'use strict';
// Shared helpers for the bench/ scripts (files starting with "_" are not benchmarks themselves).
const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');

/** Requires a compiled module from dist/, with a clear message when the build is missing. */
function dist(rel) {
  const file = path.join(DIST, rel);
  if (!fs.existsSync(file)) {
    console.error(`bench: ${path.relative(ROOT, file)} is missing; run "npm run build" first (npm run bench does)`);
    process.exit(1);
  }
  return require(file);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Forks a server script; resolves once it sends {ready, ...info} over IPC. */
function startChild(script, args = [], env = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, script), args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
    child.once('message', (msg) => {
      child.removeAllListeners('exit');
      resolve({
        child,
        info: msg,
        /** CPU time (user + system, µs) the server process has used so far. */
        cpu: () =>
          new Promise((done) => {
            const on = (m) => {
              if (m && m.cpu) {
                child.off('message', on);
                done(m.cpu.user + m.cpu.system);
              }
            };
            child.on('message', on);
            child.send({ cpu: true });
          }),
        stop: () =>
          new Promise((done) => {
            child.once('exit', () => done());
            child.send({ stop: true });
            setTimeout(() => child.kill('SIGKILL'), 5000).unref();
          }),
      });
    });
  });
}

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function report(title, rows) {
  console.log(`\n## ${title}`);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  for (const [i, r] of rows.entries()) {
    console.log(
      r
        .map((c, j) => String(c).padEnd(widths[j]))
        .join('  ')
        .trimEnd(),
    );
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}

function verdict(ratio, target) {
  return ratio >= target ? `ok (target >= ${target})` : `MISSED (target >= ${target})`;
}

module.exports = { ROOT, DIST, dist, median, tempDir, startChild, fmt, report, verdict };
