'use strict';
// Issue 39: the transparency log's Merkle tree at 1,000,000 records. Appends (the relay follows each durable
// record), the rebuild a restart does from the file log, and inclusion and consistency proofs at that size.
// Records are the relay's own encoding (~300 bytes each), in 64 MiB segments.
//   node bench/merkle.js [--events 1000000] [--proofs 2000]
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID, randomInt } = require('node:crypto');
const { parseArgs } = require('node:util');
const { dist, median, tempDir, fmt, report } = require('./_lib');

const events = dist('libs/events/src/index.js');
const { MerkleTree } = dist('libs/events/src/merkle/tree.js');
const { buildTree } = dist('libs/events/src/merkle/build.js');
const { values } = parseArgs({ options: { events: { type: 'string', default: '1000000' }, proofs: { type: 'string', default: '2000' } } });
const N = Number(values.events);
const PROOFS = Number(values.proofs);

async function main() {
  const dir = tempDir('svc-bench-merkle-');
  const lines = [];
  const stored = [];
  let prev = events.GENESIS_HASH;
  const at = new Date('2026-03-01T12:00:00.000Z').toISOString();
  for (let i = 1; i <= N; i++) {
    const r = events.encodeRecord({
      seq: i,
      id: randomUUID(),
      at,
      type: 'pairing.code_registered',
      actor: 'operator',
      data: { codeDigest: `d${i}`.padEnd(43, 'x'), source: 'mint', expiresAt: at },
      v: 1,
      prev,
    });
    prev = r.hash;
    lines.push(r.line);
    stored.push(JSON.parse(r.line));
  }
  const bytes = lines.map((l) => Buffer.from(l, 'utf8'));
  // Appends: per batch of 10,000, the time per append.
  const buffersBefore = process.memoryUsage().arrayBuffers;
  const tree = new MerkleTree();
  const perAppend = [];
  for (let i = 0; i < N; i += 10_000) {
    const t = process.hrtime.bigint();
    for (let j = i; j < Math.min(N, i + 10_000); j++) tree.appendRecord(bytes[j]);
    perAppend.push(Number(process.hrtime.bigint() - t) / 1e3 / Math.min(10_000, N - i));
  }
  // The tree's own buffers (the records above are already counted in `buffersBefore`).
  const treeBytes = process.memoryUsage().arrayBuffers - buffersBefore;
  // The relay's extra work per durable event with the tree on (transparency.service.ts follow/append):
  // re-encode the event to its stored line, check its hash, append the line. With the tree off it does none
  // of it, so this is the whole difference on the hot path (the store's own encoding is paid either way).
  const follow = new MerkleTree();
  const perFollow = [];
  for (let i = 0; i < N; i += 10_000) {
    const t = process.hrtime.bigint();
    for (let j = i; j < Math.min(N, i + 10_000); j++) {
      const { hash, ...fields } = stored[j];
      const r = events.encodeRecord(fields);
      if (r.hash !== hash) throw new Error('re-encoding changed the record');
      follow.appendRecord(Buffer.from(r.line, 'utf8'));
    }
    perFollow.push(Number(process.hrtime.bigint() - t) / 1e3 / Math.min(10_000, N - i));
  }
  // Proofs at the full size.
  const incl = [];
  const cons = [];
  for (let k = 0; k < PROOFS; k++) {
    let t = process.hrtime.bigint();
    tree.inclusion(randomInt(N), N);
    incl.push(Number(process.hrtime.bigint() - t) / 1e3);
    const m = 1 + randomInt(N - 1);
    t = process.hrtime.bigint();
    tree.consistency(m, N);
    cons.push(Number(process.hrtime.bigint() - t) / 1e3);
  }
  // A restart: the tree rebuilt from the log on disk (one pass, read-only).
  const seg = path.join(dir, 'segment-000000000001.jsonl');
  fs.writeFileSync(seg, lines.join('\n') + '\n');
  const t = process.hrtime.bigint();
  const rebuilt = await buildTree(new events.FileLogSource(dir));
  const rebuildMs = Number(process.hrtime.bigint() - t) / 1e6;
  if (!rebuilt.root().equals(tree.root())) throw new Error('the rebuilt root differs');
  report(`Merkle tree at ${fmt(N)} records (${fmt(fs.statSync(seg).size / 2 ** 20)} MiB of log)`, [
    ['measure', 'value'],
    ['append (median per record, batches of 10k)', `${fmt(median(perAppend), 2)} µs`],
    ['tree on: extra per durable event (re-encode + hash check + append; tree off: 0)', `${fmt(median(perFollow), 2)} µs`],
    ['inclusion proof (median)', `${fmt(median(incl), 1)} µs`],
    ['consistency proof (median)', `${fmt(median(cons), 1)} µs`],
    ['rebuild from the file log (a restart)', `${fmt(rebuildMs / 1000, 2)} s`],
    ['tree memory (its buffers)', `${fmt(treeBytes / 2 ** 20)} MiB`],
  ]);
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
