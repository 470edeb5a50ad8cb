'use strict';
// Issue 38: how long phones are without a relay when the leader dies, with a hot standby on the same
// PostgreSQL. Per round: a leader and a standby (real `svc relay start` processes, a throwaway server),
// the leader killed (SIGKILL: its session ends at once) or frozen (SIGSTOP: the server ends its idle
// session after the lease), and the time until the standby *serves*: /health says leader and a write
// (POST /pairing/register) answers 200. Also how far behind a standby reads: a write on the leader until
// the standby's /health has no record left to read. Medians, side by side with a relay that has no
// standby (the reference relay, ntfy, happy-server: someone starts another by hand).
//   node bench/standby.js [--rounds 5] [--lease-ms 3000]
const fs = require('node:fs');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { parseArgs } = require('node:util');
const { ROOT, median, tempDir, fmt, report } = require('./_lib');
const { startPostgres } = require('../scripts/temp-postgres');

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, 'lease-ms': { type: 'string', default: '3000' } } });
const ROUNDS = Number(values.rounds);
const LEASE = values['lease-ms'];
const BIN = path.join(ROOT, 'bin', 'svc');

function start(home, env) {
  const child = spawn(process.execPath, [BIN, 'relay', 'start'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SVC_HOME: home,
      RELAY_HOST: '127.0.0.1',
      RELAY_PORT: '0',
      RELAY_LOG_LEVEL: 'ERROR',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const t = setInterval(() => {
      const url = /^console /m.test(err) && /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err)?.[1];
      if (url) {
        clearInterval(t);
        resolve({ child, url });
      }
      if (child.exitCode !== null) {
        clearInterval(t);
        reject(new Error(err));
      }
    }, 20);
  });
}

const health = (url) =>
  fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })
    .then((r) => r.json())
    .catch(() => null);
const operator = (home) => ({ 'x-operator-key': fs.readFileSync(path.join(home, 'relay', 'operator.key'), 'utf8').trim() });

async function serves(url, home, code) {
  if ((await health(url))?.role?.role !== 'leader') return false;
  const r = await fetch(`${url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...operator(home) },
    body: JSON.stringify({ code }),
  }).catch(() => null);
  return r?.status === 200;
}

async function round(pg, n, how) {
  const url = await pg.createDatabase();
  const homes = [tempDir('svc-bench-leader-'), tempDir('svc-bench-standby-')];
  const env = { RELAY_EVENT_STORE: url, RELAY_STANDBY_POLL_MS: '100', RELAY_LEADER_LEASE_MS: LEASE };
  const leader = await start(homes[0], env);
  const init = spawnSync(process.execPath, [BIN, 'relay', 'standby', 'init', '--from', homes[0]], {
    env: { ...process.env, SVC_HOME: homes[1], RELAY_EVENT_STORE: url },
  });
  if (init.status !== 0) throw new Error(String(init.stderr));
  const standby = await start(homes[1], { ...env, RELAY_ROLE: 'standby' });
  // Follow lag: a write on the leader, until the standby has read it (the notification wakes it).
  const t0 = performance.now();
  await fetch(`${leader.url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...operator(homes[0]) },
    body: JSON.stringify({ code: `LAG${n.toString(36).toUpperCase().padStart(3, '0')}` }),
  });
  const written = (await health(leader.url)).role.seq;
  while (((await health(standby.url))?.role?.seq ?? 0) < written);
  const lagMs = performance.now() - t0;
  leader.child.kill(how);
  const died = performance.now();
  while (!(await serves(standby.url, homes[1], `BEN${n.toString(36).toUpperCase().padStart(3, '0')}`))) await new Promise((r) => setTimeout(r, 10));
  const takeoverMs = performance.now() - died;
  process.stderr.write(`round ${n} (${how}): serving after ${Math.round(takeoverMs)} ms, follow lag ${Math.round(lagMs)} ms\n`);
  for (const p of [leader, standby]) {
    p.child.kill('SIGCONT');
    p.child.kill('SIGKILL');
  }
  for (const h of homes) fs.rmSync(h, { recursive: true, force: true });
  return { takeoverMs, lagMs };
}

(async () => {
  const pg = await startPostgres();
  try {
    const kill = [];
    const freeze = [];
    for (let n = 0; n < ROUNDS; n++) kill.push(await round(pg, n, 'SIGKILL'));
    for (let n = 0; n < ROUNDS; n++) freeze.push(await round(pg, n + 50, 'SIGSTOP'));
    const ms = (xs) => `${fmt(median(xs))} ms`;
    report(`Takeover by a hot standby (PostgreSQL, median of ${ROUNDS}; serving = /health leader and a write answered 200)`, [
      ['relay', 'leader killed (SIGKILL)', `leader frozen (SIGSTOP, lease ${LEASE} ms)`, 'standby follow lag (write to read)'],
      ['svc relay --standby', ms(kill.map((r) => r.takeoverMs)), ms(freeze.map((r) => r.takeoverMs)), ms([...kill, ...freeze].map((r) => r.lagMs))],
      ['reference relay / ntfy / happy-server', 'no standby: until restarted by hand', 'no standby', 'n/a'],
    ]);
    const worst = Math.max(...kill.map((r) => r.takeoverMs), ...freeze.map((r) => r.takeoverMs));
    console.log(`\nworst round: ${fmt(worst)} ms (target: serving within 5000 ms of the leader's death) ${worst <= 5000 ? 'ok' : 'MISSED'}`);
  } finally {
    await pg.stop();
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
