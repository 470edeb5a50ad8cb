'use strict';
// The release package, checked as a target machine would use it (issue 37.2): `npm pack` of the built tree,
// `npm install -g` of that tarball into a temporary prefix, then the installed `svc relay start` run from
// elsewhere, answering /health and serving /console/ and its assets, a phone's pty shell through it, and
// better-sqlite3 loaded from the install. Exit 1 with the first failed check.
//
//   node scripts/release-check.js [--native-from DIR] [--json] [--keep]
//
// Without --native-from, npm runs node-pty's and better-sqlite3's install scripts as on a target (they
// compile from source on Linux: minutes; .ci/run does this). --native-from DIR installs with
// --ignore-scripts and copies those two modules' compiled build/Release/*.node from DIR's node_modules (the
// same versions only), so a test can check the rest in seconds (test/e2e/release-package.e2e-spec.ts).
// Needs `npm run build` first (dist/ and the console); `npm pack` would build by itself (prepack).
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
/** The modules whose install scripts must run on the target (package.json allowScripts, README). */
const NATIVE = ['node-pty', 'better-sqlite3'];
/** Build-time tools that must never reach the installed tree. */
const DEV_ONLY = [
  'typescript',
  'jest',
  'vite',
  'react',
  'react-dom',
  '@tanstack/react-query',
  'eslint',
  '@nestjs/cli',
  '@nestjs/testing',
  'playwright-core',
];
const MUST_SHIP = [
  'bin/svc',
  'dist/apps/relay/src/cli/main.js',
  'dist/apps/relay/src/compat/svc_relay_compat.py',
  'apps/console/dist/index.html',
  'LICENSE',
  'README.md',
  'CHANGELOG.md',
  'docs/OPERATING.md',
];
const MUST_NOT_SHIP = [
  /\.ts$/,
  /\.map$/,
  /^test\//,
  /^scripts\//,
  /^bench\//,
  /^libs\//,
  /^apps\/relay\/src\//,
  /^apps\/console\/src\//,
  /node_modules\//,
  /(^|\/)\.env/,
];

class CheckFailed extends Error {}
const fail = (message) => {
  throw new CheckFailed(message);
};
const npm = (args, opts = {}) => execFileSync('npm', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
const since = (t) => Math.round(performance.now() - t);

function pack(dir) {
  for (const f of ['dist/apps/relay/src/cli/main.js', 'apps/console/dist/index.html'])
    if (!fs.existsSync(path.join(ROOT, f))) fail(`${f} is missing: run "npm run build" first`);
  // The build is done; prepack would only build it again.
  const [info] = JSON.parse(npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT }));
  const files = info.files.map((f) => f.path);
  for (const f of MUST_SHIP) if (!files.includes(f)) fail(`the package lacks ${f}`);
  const extra = files.filter((f) => MUST_NOT_SHIP.some((re) => re.test(f)));
  if (extra.length) fail(`the package holds what it should not: ${extra.slice(0, 5).join(', ')}`);
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  if (pkg.private) fail('package.json is private: npm would refuse to publish it');
  const undeclared = undeclaredImports(files, pkg);
  if (undeclared.length) fail(`the built code imports what "dependencies" does not list: ${undeclared.join(', ')}`);
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(pkg.version)) fail(`version ${pkg.version} is not semver`);
  return { tarball: path.join(dir, info.filename), size: info.size, unpackedSize: info.unpackedSize, entries: info.entryCount, version: pkg.version };
}

/** Every package the shipped code requires must be a dependency: one only a dependency's dependency brings is luck. */
function undeclaredImports(files, pkg) {
  const builtin = new Set(require('node:module').builtinModules);
  const found = new Set();
  for (const f of files.filter((f) => f.startsWith('dist/') && f.endsWith('.js')))
    for (const m of fs.readFileSync(path.join(ROOT, f), 'utf8').matchAll(/\brequire\((["'])([^"'.][^"']*)\1\)/g)) {
      const name = m[2].startsWith('@') ? m[2].split('/').slice(0, 2).join('/') : m[2].split('/')[0];
      if (!name.startsWith('node:') && !builtin.has(name) && !(name in pkg.dependencies)) found.add(name);
    }
  return [...found];
}

function install(tarball, prefix, nativeFrom) {
  const t = performance.now();
  const args = ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--omit=dev'];
  // npm 12 runs no dependency's install script unless allowed; on a global install only this flag allows one.
  args.push(...(nativeFrom ? ['--ignore-scripts'] : [`--allow-scripts=${NATIVE.join(',')}`]), tarball);
  try {
    npm(args, { timeout: 20 * 60_000 });
  } catch (err) {
    fail(
      `npm install -g failed: ${String(err.stderr || err.message)
        .trim()
        .split('\n')
        .slice(-5)
        .join(' | ')}`,
    );
  }
  const installed = path.join(prefix, 'lib', 'node_modules', 'svc-relay');
  if (nativeFrom) for (const name of NATIVE) copyNative(path.join(nativeFrom, 'node_modules', name), path.join(installed, 'node_modules', name));
  const dev = DEV_ONLY.filter((name) => fs.existsSync(path.join(installed, 'node_modules', name)));
  if (dev.length) fail(`build-time packages were installed: ${dev.join(', ')}`);
  return { installed, bin: path.join(prefix, 'bin', 'svc'), ms: since(t) };
}

function copyNative(from, to) {
  const version = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  if (version(from) !== version(to))
    fail(`--native-from has ${path.basename(from)} ${version(from)}, the install ${version(to)}: run without --native-from`);
  const release = path.join(from, 'build', 'Release');
  fs.mkdirSync(path.join(to, 'build', 'Release'), { recursive: true });
  for (const f of fs.readdirSync(release).filter((f) => f.endsWith('.node')))
    fs.copyFileSync(path.join(release, f), path.join(to, 'build', 'Release', f));
}

/** The installed CLI, run from an empty directory with nothing of the checkout on its way. */
async function start(bin, dir) {
  const env = { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: dir, SVC_HOME: path.join(dir, 'svc-home') };
  Object.assign(env, { RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_PAIRING_CODE: 'PKG123', RELAY_TERMINAL_SHELL: '/bin/sh' });
  const t = performance.now();
  const child = spawn(bin, ['relay', 'start'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new CheckFailed(`the installed relay did not start within 120 s:\n${stderr}`)), 120_000);
    const look = () => {
      const m = /^console /m.test(stderr) && /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (!m) return;
      clearTimeout(timer);
      resolve(m[1]);
    };
    child.stderr.on('data', look);
    void exited.then(() => reject(new CheckFailed(`the installed relay exited:\n${stderr}`)));
  });
  return { child, url, home: env.SVC_HOME, exited, stderr: () => stderr, ms: since(t) };
}

async function probe(relay, version) {
  const health = await fetch(`${relay.url}/health`);
  const body = await health.json();
  if (health.status !== 200 || body.version !== version) fail(`/health answered ${health.status} ${JSON.stringify(body).slice(0, 200)}`);
  if (/console not built/.test(relay.stderr())) fail('the installed relay did not find its console');
  const page = await fetch(`${relay.url}/console/`);
  const html = await page.text();
  const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  if (page.status !== 200 || !asset) fail(`/console/ answered ${page.status} without its script`);
  const js = await fetch(`${relay.url}${asset}`);
  if (js.status !== 200 || (await js.arrayBuffer()).byteLength < 1000) fail(`${asset} answered ${js.status}`);
  // prom-client loads at the first scrape only: the operator's scrape proves the install holds it too.
  const key = fs.readFileSync(path.join(relay.home, 'relay', 'operator.key'), 'utf8').trim();
  const metrics = await fetch(`${relay.url}/metrics`, { headers: { 'x-operator-key': key } });
  if (metrics.status !== 200 || !/^# HELP /m.test(await metrics.text())) fail(`/metrics answered ${metrics.status}`);
  return { health: body.status, console: page.status, asset, metrics: metrics.status };
}

/** A phone pairs with the start-up code and runs a command in a pty shell: node-pty loads from the install. */
async function shell(relay, installed) {
  const WebSocket = require(path.join(installed, 'node_modules', 'ws'));
  const ws = new WebSocket(relay.url.replace(/^http/, 'ws') + '/ws');
  const frames = [];
  const next = (match) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new CheckFailed(`no frame from the installed relay's shell: ${JSON.stringify(frames.slice(-3))}`)),
        30_000,
      );
      const look = () => {
        const hit = frames.find(match);
        if (!hit) return;
        clearTimeout(timer);
        ws.off('message', look);
        resolve(hit);
      };
      ws.on('message', look);
      look();
    });
  ws.on('message', (d) => frames.push(JSON.parse(String(d))));
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  const send = (channel, type, payload, id) => ws.send(JSON.stringify({ channel, type, payload, id }));
  send('system', 'auth', { pairing_code: 'PKG123', device_name: 'Package check', device_id: 'dev-package' }, 'auth');
  const auth = await next((f) => f.id === 'auth');
  if (auth.type !== 'auth.ok') fail(`pairing with the start-up code failed: ${JSON.stringify(auth)}`);
  send('terminal', 'terminal.attach', { cols: 80, rows: 24 }, 'attach');
  const attached = await next((f) => f.id === 'attach');
  if (attached.type !== 'terminal.attached') fail(`no shell: ${JSON.stringify(attached)}`);
  send('terminal', 'terminal.input', { data: 'echo pty-$((20+22))\n' });
  await next((f) => f.type === 'terminal.output' && /pty-42/.test(JSON.stringify(f.payload)));
  ws.close();
  return 'pty-42';
}

function sqlite(installed) {
  const script = `const D = require(${JSON.stringify(path.join(installed, 'node_modules', 'better-sqlite3'))}); console.log(new D(':memory:').prepare('select 6 * 7 as x').get().x)`;
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim();
  if (out !== '42') fail(`better-sqlite3 from the install answered ${out}`);
  return out;
}

async function main(argv) {
  const nativeFrom = argv.includes('--native-from') ? path.resolve(argv[argv.indexOf('--native-from') + 1] ?? '') : null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-release-'));
  const report = { ok: false };
  let relay;
  try {
    // Node looks for modules in every node_modules above the install: none may stand in for a missing dependency.
    for (let up = path.dirname(dir); up !== path.dirname(up); up = path.dirname(up))
      if (fs.existsSync(path.join(up, 'node_modules')))
        fail(`${path.join(up, 'node_modules')} would lend the install its modules; set TMPDIR elsewhere`);
    report.pack = pack(dir);
    const inst = install(report.pack.tarball, path.join(dir, 'prefix'), nativeFrom);
    report.install = { ms: inst.ms, scripts: nativeFrom ? `ignored; ${NATIVE.join(', ')} copied from ${nativeFrom}` : 'run' };
    relay = await start(inst.bin, dir);
    report.start = { ms: relay.ms };
    report.probe = await probe(relay, report.pack.version);
    report.shell = await shell(relay, inst.installed);
    report.sqlite = sqlite(inst.installed);
    relay.child.kill('SIGTERM');
    const stop = await relay.exited;
    if (stop.code !== 0) fail(`the installed relay stopped with ${JSON.stringify(stop)}`);
    report.ok = true;
  } catch (err) {
    report.error = err instanceof CheckFailed ? err.message : String(err.stack || err);
  } finally {
    relay?.child.kill('SIGKILL');
    if (argv.includes('--keep')) report.dir = dir;
    else fs.rmSync(dir, { recursive: true, force: true });
  }
  if (argv.includes('--json')) process.stdout.write(JSON.stringify(report) + '\n');
  else process.stdout.write(report.ok ? `release check ok: ${JSON.stringify(report)}\n` : `release check failed: ${report.error}\n`);
  process.exitCode = report.ok ? 0 : 1;
}

void main(process.argv.slice(2));
