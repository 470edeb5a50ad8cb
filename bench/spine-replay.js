'use strict';
// Issue 2: replay of a 1,000,000-event log. Writes a realistic log (pairings, sessions, phone connects,
// last-seen, auth failures, shortenings, revocations, restarts) with the relay's own record encoder into
// 64 MiB segments, then times replayLog (what `svc relay events replay` and a snapshot-less start do:
// read, verify every checksum and hash link, JSON.parse, apply every projection) against a bare loop
// that reads the same files and JSON.parses each line. Rounds alternate; medians are reported.
//   node bench/spine-replay.js [--events 1000000] [--rounds 3]
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { parseArgs } = require('node:util');
const { dist, median, tempDir, fmt, report } = require('./_lib');

const events = dist('libs/events/src/index.js');
const { ReadModels } = dist('libs/domain/src/index.js');

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '2' } } });
const N = Number(values.events);
const ROUNDS = Number(values.rounds);
const SEGMENT_BYTES = 64 << 20;

const b64 = (i, salt) => Buffer.from(`${salt}:${i}:digest-padding-to-43-chars`).toString('base64url').slice(0, 43);

function* workload() {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const live = []; // session prefixes, oldest first
  let seq = 0;
  let conn = 0;
  const at = () => new Date(t0 + seq * 1000).toISOString();
  const grants = (now) => {
    const g = {};
    for (const [ch, days] of [
      ['chat', 30],
      ['terminal', 30],
      ['tui', 30],
      ['bridge', 7],
      ['voice:config', 30],
      ['voice:stt', 30],
      ['voice:tts', 30],
      ['voice:realtime', 30],
      ['desktop', 7],
    ]) {
      g[ch] = new Date(now + days * 86400_000).toISOString();
    }
    return g;
  };
  for (let i = 0; ; i++) {
    const now = t0 + seq * 1000;
    const k = i % 20;
    if (i % 100_000 === 0)
      yield { type: 'relay.started', actor: 'system', data: { version: '0.1.0', pid: 1000 + i, host: '0.0.0.0', port: 8767, tls: false } };
    else if (k === 0)
      yield {
        type: 'pairing.code_registered',
        actor: 'operator',
        data: {
          codeDigest: b64(i, 'code'),
          source: 'mint',
          expiresAt: new Date(now + 600_000).toISOString(),
          terms: {
            sessionTtlSeconds: 2592000,
            grants: { chat: null, terminal: 2592000, tui: 2592000, bridge: 604800, desktop: 604800 },
            transportHint: null,
          },
        },
      };
    else if (k === 1)
      yield {
        type: 'pairing.code_consumed',
        actor: 'public:192.168.1.20',
        data: { codeDigest: b64(i - 1, 'code'), tokenPrefix: `p${String(i).padStart(7, '0')}`.slice(-8), deviceId: `dev-${i}` },
      };
    else if (k === 2) {
      const prefix = `p${String(i - 1).padStart(7, '0')}`.slice(-8);
      live.push(prefix);
      yield {
        type: 'session.created',
        actor: 'public:192.168.1.20',
        data: {
          tokenDigest: b64(i, 'token'),
          tokenPrefix: prefix,
          deviceId: `dev-${i - 1}`,
          deviceName: 'Pixel 8',
          deviceModel: 'Pixel 8',
          devicePlatform: 'android',
          transportHint: null,
          expiresAt: new Date(now + 30 * 86400_000).toISOString(),
          grants: grants(now),
          ip: '192.168.1.20',
        },
      };
    } else if (k === 3 || k === 4)
      yield {
        type: 'phone.connected',
        actor: `device:${live.at(-1)}`,
        data: { connId: `c${conn++}`, tokenPrefix: live.at(-1), deviceId: 'dev', ip: '192.168.1.20', path: '/ws' },
      };
    else if (k === 5)
      yield {
        type: 'phone.disconnected',
        actor: `device:${live.at(-1)}`,
        data: { connId: `c${conn - 2}`, tokenPrefix: live.at(-1), code: 1000, reason: '' },
      };
    else if (k === 16)
      yield {
        type: 'auth.failed',
        actor: 'public:10.0.0.9',
        data: { ip: `10.0.${(i >> 8) & 255}.${i & 255}`, kind: 'token', via: 'http', reason: 'unknown, revoked or expired session token' },
      };
    else if (k === 17)
      yield {
        type: 'session.shortened',
        actor: `device:${live.at(-1)}`,
        data: { tokenPrefix: live.at(-1), expiresAt: new Date(now + 7 * 86400_000).toISOString(), grants: grants(now - 23 * 86400_000) },
      };
    else if (k === 18 && live.length > 200)
      yield { type: 'session.revoked', actor: 'operator', data: { tokenPrefix: live.shift(), by: 'operator', self: false, reason: 'revoked' } };
    else
      yield {
        type: 'session.seen',
        actor: `device:${live[i % live.length]}`,
        data: { tokenPrefix: live[i % live.length], ip: '192.168.1.20', via: 'ws' },
      };
    seq++;
    void at;
  }
}

function writeLog(dir, n) {
  fs.mkdirSync(dir, { recursive: true });
  let prev = events.GENESIS_HASH;
  let seq = 0;
  let fd = fs.openSync(path.join(dir, events.segmentName(1)), 'w');
  let size = 0;
  let chunk = '';
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const gen = workload();
  while (seq < n) {
    const e = gen.next().value;
    seq++;
    const { line, hash } = events.encodeRecord({
      seq,
      id: randomUUID(),
      at: new Date(t0 + seq * 1000).toISOString(),
      type: e.type,
      actor: e.actor,
      data: e.data,
      v: 1,
      prev,
    });
    prev = hash;
    chunk += line + '\n';
    if (chunk.length > 1 << 20) {
      fs.writeSync(fd, chunk);
      size += Buffer.byteLength(chunk);
      chunk = '';
      if (size >= SEGMENT_BYTES) {
        fs.closeSync(fd);
        fd = fs.openSync(path.join(dir, events.segmentName(seq + 1)), 'w');
        size = 0;
      }
    }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
}

/**
 * The floor of any replay that verifies: the same read and JSON.parse, plus one SHA-256 of each record's
 * hashed part (what the chain needs at least; a checksum cannot be checked without hashing the bytes).
 */
function bareParseHash(dir) {
  const { hash } = require('node:crypto');
  const TAIL = ',"hash":"'.length + 64 + 2;
  const t = process.hrtime.bigint();
  let n = 0;
  for (const f of fs.readdirSync(dir).sort()) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const line = text.slice(start, nl);
      hash('sha256', line.slice(0, line.length - TAIL) + '}', 'hex');
      JSON.parse(line);
      n++;
      start = nl + 1;
    }
  }
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  if (n !== N) throw new Error(`parsed ${n} of ${N}`);
  return s;
}

function relayReplay(dir) {
  const t = process.hrtime.bigint();
  const r = events.replayLog(dir, new ReadModels());
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  if (r.events !== N) throw new Error(`replayed ${r.events} of ${N}`);
  return s;
}

/**
 * replayLog with read models that do nothing: the log's own cost (read, every check, JSON.parse, opening sealed
 * content) without the projections; the relay's row minus this one is what its 20 read models cost.
 */
function noModelsReplay(dir) {
  const t = process.hrtime.bigint();
  const r = events.replayLog(dir, { apply() {}, snapshot: () => ({}), restore() {} });
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  if (r.events !== N) throw new Error(`replayed ${r.events} of ${N}`);
  return s;
}

/** The floor: read the same files and JSON.parse each line, nothing else. */
function bareParse(dir) {
  const t = process.hrtime.bigint();
  let n = 0;
  for (const f of fs.readdirSync(dir).sort()) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      JSON.parse(text.slice(start, nl));
      n++;
      start = nl + 1;
    }
  }
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  if (n !== N) throw new Error(`parsed ${n} of ${N}`);
  return s;
}

(async () => {
  const home = tempDir('svc-bench-replay-');
  const dir = path.join(home, 'events');
  try {
    const t = Date.now();
    writeLog(dir, N);
    const bytes = fs.readdirSync(dir).reduce((s, f) => s + fs.statSync(path.join(dir, f)).size, 0);
    console.log(
      `wrote ${fmt(N)} events (${fmt(bytes / 1048576, 1)} MiB in ${fs.readdirSync(dir).length} segments) in ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
    const relay = [];
    const bare = [];
    const bareHash = [];
    const noModels = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        bare.push(bareParse(dir));
        bareHash.push(bareParseHash(dir));
        noModels.push(noModelsReplay(dir));
        relay.push(relayReplay(dir));
      } else {
        relay.push(relayReplay(dir));
        noModels.push(noModelsReplay(dir));
        bareHash.push(bareParseHash(dir));
        bare.push(bareParse(dir));
      }
    }
    const r = N / median(relay);
    const b = N / median(bare);
    const bh = N / median(bareHash);
    const nm = N / median(noModels);
    report(`replay of a ${fmt(N)}-event log (${ROUNDS} rounds)`, [
      ['reader', 'median events/s', 'median s', 'rounds s'],
      ['bare read + JSON.parse', fmt(b), median(bare).toFixed(2), bare.map((x) => x.toFixed(2)).join(' / ')],
      ['bare read + SHA-256 + JSON.parse (verify floor)', fmt(bh), median(bareHash).toFixed(2), bareHash.map((x) => x.toFixed(2)).join(' / ')],
      ['replayLog into no read models (verify + parse)', fmt(nm), median(noModels).toFixed(2), noModels.map((x) => x.toFixed(2)).join(' / ')],
      ['svc relay replayLog (verify + parse + project)', fmt(r), median(relay).toFixed(2), relay.map((x) => x.toFixed(2)).join(' / ')],
      ['ratio (relay / bare read + parse)', (r / b).toFixed(2), '', ''],
      ['ratio (verify floor / bare read + parse)', (bh / b).toFixed(2), '', ''],
      ['ratio (no read models / verify floor)', (nm / bh).toFixed(2), '', ''],
      ['ratio (relay / verify floor)', (r / bh).toFixed(2), '', ''],
      ["read models: share of the relay's replay time", `${(100 * (1 - median(noModels) / median(relay))).toFixed(0)}%`, '', ''],
    ]);
    console.log(
      `\nRESULT ${JSON.stringify({ events: N, bytes, relayEps: r, bareEps: b, bareHashEps: bh, noModelsEps: nm, ratio: r / b, ratioToFloor: r / bh })}`,
    );
  } finally {
    if (!process.env.BENCH_KEEP) fs.rmSync(home, { recursive: true, force: true });
    else console.log(`kept ${dir}`);
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
