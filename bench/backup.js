'use strict';
// Issue 37.5: `svc relay backup` and `svc relay restore` of a home holding ~100,000 events, as an operator
// runs them (the CLI's own process, wall time), beside a bare `tar -cf` of the same home (the floor: read
// and write the same bytes, no chain proof, no hashing). The log is written with the relay's own record
// encoder: pairing codes registered, sessions created and revoked, phones connecting, in 64 MiB segments.
//   node bench/backup.js [--events 100000] [--rounds 3]
const fs = require('node:fs');
const path = require('node:path');
const { randomBytes, randomUUID } = require('node:crypto');
const { spawnSync } = require('node:child_process');
const { parseArgs } = require('node:util');
const { ROOT, dist, median, tempDir, fmt, report } = require('./_lib');

const events = dist('libs/events/src/index.js');
const { values } = parseArgs({ options: { events: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '3' } } });
const N = Number(values.events);
const ROUNDS = Number(values.rounds);
const SEGMENT_BYTES = 64 << 20;

const digest = (i, salt) => Buffer.from(`${salt}:${i}:digest-padding-to-43-chars`).toString('base64url').slice(0, 43);

function record(i, now) {
  const prefix = digest(i, 'p').slice(0, 8);
  switch (i % 4) {
    case 0:
      return {
        type: 'pairing.code_registered',
        actor: 'operator',
        data: { codeDigest: digest(i, 'code'), source: 'mint', expiresAt: new Date(now + 600_000).toISOString() },
      };
    case 1:
      return {
        type: 'session.created',
        actor: 'system',
        data: {
          tokenDigest: digest(i, 'tok'),
          tokenPrefix: prefix,
          deviceId: `dev-${i}`,
          deviceName: 'Pixel 8',
          expiresAt: new Date(now + 30 * 86400_000).toISOString(),
          grants: { chat: null, terminal: null },
        },
      };
    case 2:
      return { type: 'phone.connected', actor: `device:${prefix}`, data: { tokenPrefix: prefix, connectionId: randomUUID(), ip: '192.168.1.20' } };
    default:
      return { type: 'session.revoked', actor: 'operator', data: { tokenPrefix: prefix, by: 'operator', self: false } };
  }
}

/** A home as a relay leaves it: the log, its keys and secrets. */
function writeHome(home, n) {
  const dir = path.join(home, 'relay', 'events');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const f of ['secret.key', 'operator.key', 'forwarder.key'])
    fs.writeFileSync(path.join(home, 'relay', f), randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
  let prev = events.GENESIS_HASH;
  let fd = fs.openSync(path.join(dir, events.segmentName(1)), 'w', 0o600);
  let size = 0;
  let chunk = '';
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  for (let seq = 1; seq <= n; seq++) {
    const e =
      seq === 1
        ? { type: 'relay.started', actor: 'system', data: { version: '0.1.0', pid: 1, host: '0.0.0.0', port: 8767, tls: false } }
        : record(seq, t0 + seq * 1000);
    const { line, hash } = events.encodeRecord({ seq, id: randomUUID(), at: new Date(t0 + seq * 1000).toISOString(), ...e, v: 1, prev });
    prev = hash;
    chunk += line + '\n';
    if (chunk.length > 1 << 20 || seq === n) {
      fs.writeSync(fd, chunk);
      size += Buffer.byteLength(chunk);
      chunk = '';
      if (size >= SEGMENT_BYTES && seq < n) {
        fs.closeSync(fd);
        fd = fs.openSync(path.join(dir, events.segmentName(seq + 1)), 'w', 0o600);
        size = 0;
      }
    }
  }
  fs.closeSync(fd);
}

function timed(cmd, args, env = {}) {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

function main() {
  const work = tempDir('svc-bench-backup-');
  const home = path.join(work, 'home');
  writeHome(home, N);
  const homeBytes = fs
    .readdirSync(path.join(home, 'relay', 'events'))
    .reduce((n, f) => n + fs.statSync(path.join(home, 'relay', 'events', f)).size, 0);
  const bin = path.join(ROOT, 'bin', 'svc');
  const backup = [];
  const restore = [];
  const floor = [];
  let archiveBytes = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const out = path.join(work, `b${r}.backup`);
    floor.push(timed('tar', ['-cf', path.join(work, `t${r}.tar`), '-C', home, '.']));
    backup.push(timed(process.execPath, [bin, 'relay', 'backup', '--out', out], { SVC_HOME: home }));
    archiveBytes = fs.statSync(out).size;
    restore.push(timed(process.execPath, [bin, 'relay', 'restore', out, '--home', path.join(work, `r${r}`)]));
    for (const f of [out, path.join(work, `t${r}.tar`)]) fs.rmSync(f);
    fs.rmSync(path.join(work, `r${r}`), { recursive: true });
  }
  fs.rmSync(work, { recursive: true, force: true });
  const mib = (n) => fmt(n / 1048576, 1);
  const rate = (ms) => fmt(homeBytes / 1048576 / (ms / 1000), 1);
  console.log(
    `home: ${fmt(N)} events, log ${mib(homeBytes)} MiB; archive ${mib(archiveBytes)} MiB; ${ROUNDS} rounds (each CLI time includes starting node)`,
  );
  report('backup and restore', [
    ['command', 'median ms', 'log MiB/s', 'x tar -cf'],
    [
      'svc relay backup (every record proven, every file hashed)',
      fmt(median(backup)),
      rate(median(backup)),
      (median(backup) / median(floor)).toFixed(1),
    ],
    [
      'svc relay restore (headers, manifest, sha256, chain, rename)',
      fmt(median(restore)),
      rate(median(restore)),
      (median(restore) / median(floor)).toFixed(1),
    ],
    ['tar -cf of the same home (the floor)', fmt(median(floor)), rate(median(floor)), '1.0'],
  ]);
}

main();
