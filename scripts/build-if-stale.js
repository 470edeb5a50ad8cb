'use strict';
// `npm start`'s build (package.json "prestart"): builds only the parts whose inputs changed since the
// last build, so a start with nothing changed skips tsc and vite (about 30 s and more beside a running
// relay) and a changed file still gets built. A part is stale when its output is missing or the digest
// of its inputs (every file's path, size and mtime, as make and tsc --incremental trust them) differs
// from the one recorded in dist/.build-stamp.json by its last build. `npm run build` builds everything
// and records the digests (--record). Used by the tests too (test/support/dist.ts, test/console/browser.ts):
// one rule for "is the build current".
const crypto = require('node:crypto');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const STAMP = 'dist/.build-stamp.json';
const SKIP = new Set(['node_modules', 'dist', '.stryker-tmp', 'coverage']);

/** Each part: what it reads, what it writes (its presence), and how it is built (package.json's own scripts). */
const PARTS = {
  relay: {
    inputs: ['apps/relay/src', 'apps/phone-sim/src', 'libs', 'scripts/copy-assets.js', 'tsconfig.json', 'tsconfig.build.json', 'package.json'],
    output: 'dist/apps/relay/src/cli/main.js',
    build: (root) => {
      const bin = (name) => path.join(root, 'node_modules', '.bin', name);
      execFileSync(bin('tsc'), ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
      execFileSync(bin('tsc-alias'), ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
      require('./copy-assets').copyAssets(root);
    },
  },
  console: {
    inputs: ['apps/console', 'libs', 'package.json'],
    output: 'apps/console/dist/index.html',
    build: (root) =>
      execFileSync(path.join(root, 'node_modules', '.bin', 'vite'), ['build', '--config', 'apps/console/vite.config.mts', '--logLevel', 'warn'], {
        cwd: root,
        stdio: 'inherit',
      }),
  },
};

/** The digest of a part's inputs: sorted paths with size and mtime (no file is read). */
function inputsDigest(root, inputs) {
  const rows = [];
  const walk = (rel) => {
    let st;
    try {
      st = fs.statSync(path.join(root, rel));
    } catch {
      rows.push(`${rel}\0missing`);
      return;
    }
    // Unit specs are not built (tsconfig.build.json excludes them): changing one needs no build.
    if (!st.isDirectory()) return void (rel.endsWith('.spec.ts') || rows.push(`${rel}\0${st.size}\0${st.mtimeMs}`));
    for (const name of fs.readdirSync(path.join(root, rel)).sort()) if (!SKIP.has(name)) walk(path.join(rel, name));
  };
  for (const input of inputs) walk(input);
  return crypto.createHash('sha256').update(rows.join('\n')).digest('hex');
}

function readStamp(root) {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, STAMP), 'utf8'));
  } catch {
    return {};
  }
}

function writeStamp(root, stamp) {
  fs.mkdirSync(path.dirname(path.join(root, STAMP)), { recursive: true });
  fs.writeFileSync(path.join(root, STAMP), JSON.stringify(stamp, null, 2) + '\n');
}

/** The parts whose output is missing or whose inputs changed since their last recorded build. */
function staleParts(root = ROOT, names = Object.keys(PARTS)) {
  const stamp = readStamp(root);
  return names.filter((name) => !fs.existsSync(path.join(root, PARTS[name].output)) || stamp[name] !== inputsDigest(root, PARTS[name].inputs));
}

/**
 * Records the digests of `names` as built now. Taken before the build and written after it: a file
 * edited while the build ran leaves the part stale for the next start.
 */
function buildParts(root, names, build = true) {
  const stamp = readStamp(root);
  for (const name of names) {
    const digest = inputsDigest(root, PARTS[name].inputs);
    if (build) PARTS[name].build(root);
    stamp[name] = digest;
    writeStamp(root, stamp);
  }
}

/** Builds what is stale (or, with `record`, only records the current inputs after `npm run build`). */
function buildIfStale(root = ROOT, { record = false, log = (s) => process.stderr.write(s + '\n') } = {}) {
  if (record) return (buildParts(root, Object.keys(PARTS), false), []);
  const stale = staleParts(root);
  log(
    stale.length === 0
      ? 'build: nothing changed since the last build; skipped'
      : `build: ${stale.join(' and ')} changed; building ${stale.join(', ')}`,
  );
  buildParts(root, stale);
  return stale;
}

module.exports = { PARTS, STAMP, inputsDigest, staleParts, buildParts, buildIfStale };

if (require.main === module) buildIfStale(ROOT, { record: process.argv.includes('--record') });
