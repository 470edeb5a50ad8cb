'use strict';
// Issue 38 item 4: the personal data keys of a PostgreSQL log sealed under the home's KEK. What a relay's
// start pays to open them (a year of 10 phones sending content every hour is ~88,000 keys), against the
// same rows as an earlier version stored them (32 bytes in the clear, no unsealing: the baseline); what a
// new key's row costs; a standby's follow tick (every row read again, before; the batch's keys by id, now);
// and the one-time sealing of the plain rows an upgraded leader does at its start.
//   node bench/personal-keys-pg.js [--keys 100000] [--runs 5]
const { randomBytes } = require('node:crypto');
const { parseArgs } = require('node:util');
const { Client } = require('pg');
const { dist, median, fmt, report } = require('./_lib');
const { startPostgres } = require('../scripts/temp-postgres');

const { PgKeyStore, wrapDataKey, KEY_TABLE, KEY_TABLE_DDL } = dist('apps/relay/src/personal/pg-key-store.js');
const { values } = parseArgs({ options: { keys: { type: 'string', default: '100000' }, runs: { type: 'string', default: '5' } } });
const N = Number(values.keys);
const RUNS = Number(values.runs);

const hour = (h) => new Date(Date.UTC(2026, 0, 1) + h * 3_600_000).toISOString().slice(0, 13);

/** `N` key ids of the relay's shape (`<device>:<hour>:<8 hex>`), 10 devices, consecutive hours. */
function ids() {
  const out = [];
  for (let i = 0; i < N; i++) out.push(`dev${i % 10}:${hour(Math.floor(i / 10))}:${randomBytes(4).toString('hex')}`);
  return out;
}

async function fill(url, rows) {
  const c = new Client({ connectionString: url });
  await c.connect();
  await c.query(KEY_TABLE_DDL);
  for (let i = 0; i < rows.length; i += 5000) {
    const page = rows.slice(i, i + 5000);
    await c.query(`INSERT INTO ${KEY_TABLE} (id, key) SELECT * FROM unnest($1::text[], $2::bytea[])`, [
      page.map((r) => r.id),
      page.map((r) => r.key),
    ]);
  }
  await c.end();
}

async function timeOpen(url, kek, opts = {}) {
  const t0 = process.hrtime.bigint();
  const store = await PgKeyStore.open(url, { where: 'bench KEK', load: () => kek }, opts);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const n = store.ids().length;
  await store.close();
  if (n !== N) throw new Error(`opened ${n} keys, not ${N}`);
  return ms;
}

async function main() {
  const pg = await startPostgres();
  try {
    const kek = randomBytes(32);
    const keyIds = ids();
    const keys = keyIds.map(() => randomBytes(32));
    const sealedUrl = await pg.createDatabase('sealed');
    const plainUrl = await pg.createDatabase('plain');
    await fill(
      sealedUrl,
      keyIds.map((id, i) => ({ id, key: wrapDataKey(kek, id, keys[i]) })),
    );
    await fill(
      plainUrl,
      keyIds.map((id, i) => ({ id, key: keys[i] })),
    );

    const sealed = [];
    const plain = [];
    for (let r = 0; r < RUNS; r++) {
      // Side by side, alternating, so a drift of the machine hits both.
      plain.push(await timeOpen(plainUrl, kek));
      sealed.push(await timeOpen(sealedUrl, kek));
    }

    // A new key's row: the INSERT the sealer waits for before it acknowledges what the key seals.
    const store = await PgKeyStore.open(sealedUrl, { where: 'bench KEK', load: () => kek });
    const inserts = [];
    for (let i = 0; i < 200; i++) {
      const t0 = process.hrtime.bigint();
      await store.current(`bench${i}:${hour(0)}`).persisted;
      inserts.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    await store.close();

    // A standby's follow tick: the keys of a batch the leader just sealed (10 new ones), read before the batch
    // applies. Before: every row read again each tick (sync()); now: only the batch's missing ids (sync(ids)).
    const leader = await PgKeyStore.open(sealedUrl, { where: 'bench KEK', load: () => kek });
    const standby = await PgKeyStore.open(sealedUrl, { where: 'bench KEK', load: () => kek });
    const fullTick = [];
    const byIdTick = [];
    let slot = 0;
    const tenNew = async () => {
      const made = [];
      for (let i = 0; i < 10; i++) {
        const k = leader.current(`follow${slot++}:${hour(1)}`);
        await k.persisted;
        made.push(k.id);
      }
      return made;
    };
    for (let r = 0; r < RUNS; r++) {
      await tenNew();
      let t0 = process.hrtime.bigint();
      await standby.sync();
      fullTick.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const made = await tenNew();
      t0 = process.hrtime.bigint();
      await standby.sync(made);
      byIdTick.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (!made.every((id) => standby.get(id))) throw new Error('the standby did not get the new keys');
    }
    await leader.close();
    await standby.close();

    // The upgrade: an earlier version's plain rows, sealed in place by the leader's start (once).
    const upgradeMs = await timeOpen(plainUrl, kek, { upgrade: true });
    const after = await timeOpen(plainUrl, kek);

    const p = median(plain);
    const s = median(sealed);
    report(`Opening ${fmt(N)} data keys at start (median of ${RUNS}, PostgreSQL on loopback)`, [
      ['rows', 'open (ms)', 'per key (us)', 'ratio to plain'],
      ['plain, as earlier versions stored them (baseline)', fmt(p), fmt((p * 1000) / N, 1), '1.00x'],
      ['sealed under the KEK (now)', fmt(s), fmt((s * 1000) / N, 1), `${(s / p).toFixed(2)}x`],
    ]);
    report('A new key (the INSERT of a sealed row, 200 keys)', [
      ['median (ms)', 'max (ms)'],
      [fmt(median(inserts), 2), fmt(Math.max(...inserts), 2)],
    ]);
    report(`A standby's follow tick with ${fmt(N)} keys in the table and 10 new (median of ${RUNS})`, [
      ['read', 'ms', 'ratio to every row'],
      ['every row, as before (baseline)', fmt(median(fullTick), 1), '1.00x'],
      ["only the batch's missing ids (now)", fmt(median(byIdTick), 2), `${(median(byIdTick) / median(fullTick)).toFixed(4)}x`],
    ]);
    report(`Sealing ${fmt(N)} plain rows in place (an upgraded leader's first start, once)`, [
      ['open + seal + vacuum (ms)', 'the next open (ms)'],
      [fmt(upgradeMs), fmt(after)],
    ]);
  } finally {
    await pg.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
