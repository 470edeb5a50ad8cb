'use strict';
// The subjects of bench/side-by-side.js, each started as its own process on a free loopback port, in a process group
// of its own (so stopping it stops anything it started), stdout ignored and stderr kept in its temp dir (shown only
// when it fails to start):
//   relay      `bin/svc relay start` as an operator starts it: a temp SVC_HOME, RELAY_LOG_LEVEL=ERROR, RELAY_LOG_FORMAT=json
//              (and RELAY_RECONNECT_BURST lifted: the socket footprint opens thousands of sockets of one session)
//   node       bare node:http + ws                      (bench/_footprint-servers.js)
//   fastify    bare fastify + ws                        (bench/_footprint-servers.js)
//   nest       minimal Nest 11 + Fastify + WsAdapter    (bench/_footprint-servers.js)
//   files      bare Node file server, GET /file         (bench/_footprint-servers.js)
//   reference  the reference relay (Python aiohttp): `/usr/bin/python3 -m plugin.relay --no-ssl` in its checkout, with
//              HOME and HERMES_HOME in a temp dir (it keeps sessions in ~/.hermes, reads ~/.hermes/.env)
// Every child still running when this process exits (normally, on an error, or on SIGINT/SIGTERM/SIGHUP) is killed.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const WebSocket = require('ws');
const { ROOT, tempDir } = require('./_lib');

const LABELS = {
  relay: 'svc relay',
  node: 'bare node:http + ws',
  fastify: 'bare fastify + ws',
  nest: 'minimal Nest 11 + Fastify + WsAdapter',
  files: 'bare Node file server',
  'fastify-body': "bare fastify, the relay's /health body",
  'nest-body': '+ Nest 11 (FastifyAdapter, no middie)',
  'nest-hooks': "+ the relay's 6 callback hooks (no-ops)",
  'nest-multipart': '+ @fastify/multipart on the whole instance',
  reference: 'reference relay (aiohttp)',
};
const PYTHON = '/usr/bin/python3';
// Python's bytecode cache, kept between runs outside the reference checkout (an installed relay has its own).
const PYCACHE = path.join(os.tmpdir(), 'svc-side-by-side-pycache');

const live = new Set();
const temps = new Set();

function killAll() {
  for (const s of live) kill(s, 'SIGKILL');
  live.clear();
  for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
  temps.clear();
}
process.on('exit', killAll);
for (const [sig, n] of [
  ['SIGINT', 2],
  ['SIGTERM', 15],
  ['SIGHUP', 1],
])
  process.on(sig, () => {
    console.error(`\nside-by-side: ${sig}, stopping every subject`);
    killAll();
    process.exit(128 + n);
  });

/** A temp dir removed when this process exits. */
function scratch(prefix) {
  const dir = tempDir(prefix);
  temps.add(dir);
  return dir;
}

function kill(s, signal) {
  try {
    process.kill(-s.pid, signal); // the whole process group
  } catch {
    // already gone
  }
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.once('error', reject);
  });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The environment this process inherited, without any relay's own settings (they would change what is measured). */
function baseEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(RELAY_|SVC_|HERMES_)/.test(k)));
}

function command(kind, port, home, opts) {
  const mediaMb = String(opts.mediaMaxMb ?? 100);
  if (kind === 'relay')
    return {
      cmd: process.execPath,
      args: [path.join(ROOT, 'bin/svc'), 'relay', 'start'],
      cwd: ROOT,
      env: {
        ...baseEnv(),
        SVC_HOME: path.join(home, 'svc'),
        RELAY_HOST: '127.0.0.1',
        RELAY_PORT: String(port),
        RELAY_LOG_LEVEL: 'ERROR',
        RELAY_LOG_FORMAT: 'json',
        RELAY_MEDIA_MAX_SIZE_MB: mediaMb,
        // openSockets opens thousands of sockets of one session: the reconnect budget (20 at once) is lifted.
        RELAY_RECONNECT_BURST: '1000000',
      },
    };
  if (kind === 'reference') {
    fs.mkdirSync(path.join(home, 'home', '.hermes'), { recursive: true });
    return {
      cmd: PYTHON,
      args: ['-m', 'plugin.relay', '--no-ssl', '--host', '127.0.0.1', '--port', String(port)],
      cwd: opts.ref,
      env: {
        ...baseEnv(),
        HOME: path.join(home, 'home'),
        HERMES_HOME: path.join(home, 'home', '.hermes'),
        RELAY_LOG_LEVEL: 'ERROR',
        RELAY_MEDIA_MAX_SIZE_MB: mediaMb,
        PYTHONPYCACHEPREFIX: PYCACHE,
      },
    };
  }
  return {
    cmd: process.execPath,
    args: [path.join(__dirname, '_footprint-servers.js'), kind],
    cwd: ROOT,
    env: { ...baseEnv(), PORT: String(port), FILE: opts.file ?? '' },
  };
}

/**
 * Starts one subject and waits for its first `GET /health` 200 (polled every 2 ms). `startMs` is from spawn to that
 * answer. opts: { ref (reference checkout), file (for `files`), mediaMaxMb (relay and reference upload cap), cpu (pin) }.
 */
async function start(kind, opts = {}) {
  const port = await freePort();
  const home = scratch(`svc-sbs-${kind}-`);
  const errFile = path.join(home, 'stderr.log');
  const { cmd, args, cwd, env } = command(kind, port, home, opts);
  const err = fs.openSync(errFile, 'w');
  const t0 = process.hrtime.bigint();
  // opts.cpu: pinned to that CPU with taskset (which execs the command: the pid stays the subject's).
  const pinned = opts.cpu !== undefined ? ['taskset', ['-c', String(opts.cpu), cmd, ...args]] : [cmd, args];
  const child = spawn(pinned[0], pinned[1], { cwd, env, stdio: ['ignore', 'ignore', err], detached: true });
  fs.closeSync(err);
  const s = { kind, label: LABELS[kind], port, url: `http://127.0.0.1:${port}`, pid: child.pid, child, home, startMs: NaN };
  live.add(s);
  let exited = null;
  child.once('exit', (code, signal) => (exited = signal ?? code));
  for (;;) {
    try {
      const res = await fetch(`${s.url}/health`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (exited !== null || Number(process.hrtime.bigint() - t0) > 60e9) {
      const tail = fs.readFileSync(errFile, 'utf8').split('\n').slice(-15).join('\n');
      await stop(s);
      throw new Error(`${s.label} did not answer /health (${exited === null ? 'no answer in 60 s' : `exited ${exited}`}); its stderr:\n${tail}`);
    }
    await sleep(2);
  }
  s.startMs = Number(process.hrtime.bigint() - t0) / 1e6;
  s.readyAt = Date.now();
  return s;
}

/** SIGTERM to the subject's process group, SIGKILL after 5 s; then its temp dir is removed. */
async function stop(s) {
  if (!live.has(s)) return;
  const gone = new Promise((r) => (s.child.exitCode !== null || s.child.signalCode !== null ? r() : s.child.once('exit', r)));
  kill(s, 'SIGTERM');
  const timer = setTimeout(() => kill(s, 'SIGKILL'), 5000);
  await gone;
  clearTimeout(timer);
  kill(s, 'SIGKILL'); // anything it left behind in its group
  live.delete(s);
  fs.rmSync(s.home, { recursive: true, force: true });
  temps.delete(s.home);
}

/** Resident memory (KiB, /proc/<pid>/status VmRSS). */
const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux
/** CPU time (user + system, µs, every thread) the process has used so far (/proc/<pid>/stat utime + stime). */
function cpuUs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}

/**
 * Pairs one device the way the host tooling does, on both relays (same wire family): a loopback
 * `POST /pairing/register {code}`, then a WebSocket on /ws whose first frame is system/auth with that pairing code;
 * resolves the session token from auth.ok.
 */
async function pair(s, code = 'SBS001') {
  const res = await fetch(`${s.url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (res.status !== 200) throw new Error(`${s.label}: POST /pairing/register ${res.status} ${await res.text()}`);
  const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}/ws`, { perMessageDeflate: false });
  try {
    return await new Promise((resolve, reject) => {
      ws.once('open', () =>
        ws.send(
          JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { pairing_code: code, device_name: 'bench', device_id: 'bench' } }),
        ),
      );
      ws.once('message', (d) => {
        const f = JSON.parse(String(d));
        if (f.type === 'auth.ok' && f.payload?.session_token) resolve(f.payload.session_token);
        else reject(new Error(`${s.label}: pairing auth answered ${String(d).slice(0, 200)}`));
      });
      ws.once('error', reject);
    });
  } finally {
    ws.close();
  }
}

/**
 * Opens n WebSockets on /ws that each send a first system/auth frame with the session token and wait for auth.ok,
 * 8 at a time, spread over source addresses 127.1.x.y (no per-address limit is what is measured).
 */
async function openSockets(s, n, token) {
  const socks = [];
  try {
    for (let i = 0; i < n; i += 8) {
      const batch = Array.from({ length: Math.min(8, n - i) }, (_, j) => {
        const k = i + j;
        const localAddress = `127.1.${Math.floor(k / 250)}.${(k % 250) + 1}`;
        return new Promise((resolve, reject) => {
          const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}/ws`, { localAddress, perMessageDeflate: false });
          socks.push(ws);
          ws.once('open', () => ws.send(JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { session_token: token } })));
          ws.once('message', (d) =>
            String(d).includes('auth.ok') ? resolve() : reject(new Error(`${s.label}: socket auth answered ${String(d).slice(0, 200)}`)),
          );
          ws.once('error', reject);
        });
      });
      await Promise.all(batch);
    }
    return socks;
  } catch (err) {
    for (const ws of socks) ws.terminate();
    throw err;
  }
}

/** Registers a host file on a relay (loopback `POST /media/register {path}`); the URL that serves it. */
async function registerMedia(s, file) {
  if (s.kind === 'files') return `${s.url}/file`;
  const res = await fetch(`${s.url}/media/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ path: file, content_type: 'application/octet-stream', file_name: 'big.bin' }),
  });
  const body = await res.json().catch(() => ({}));
  if (res.status !== 200 || !body.token) throw new Error(`${s.label}: POST /media/register ${res.status} ${JSON.stringify(body)}`);
  return `${s.url}/media/${body.token}`;
}

module.exports = { LABELS, PYTHON, start, stop, scratch, rssKiB, cpuUs, pair, openSockets, registerMedia, sleep };
