'use strict';
// Issue 37.4: how big the file log stays under RELAY_LOG_RETENTION_DAYS. A simulated year of one busy phone
// (the day's mix below, ~880 events a day, record sizes as the relay writes them, personal text sealed) is
// appended through the file store a day at a time, with the retention's cut run after each day (whole
// segments whose last record is older than --days; the snapshot taken as the head), and the live log's
// size is reported: its largest over the year, and at the end, with the time to verify what is left.
//   node bench/log-retention.js [--days 30] [--segment-mb 64,8]
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { dist, tempDir } = require('./_lib');
const events = dist('libs/events/src/index.js');

const { values } = parseArgs({ options: { days: { type: 'string', default: '30' }, 'segment-mb': { type: 'string', default: '64,8' } } });
const DAYS = Number(values.days);

const text = (n) => 'x'.repeat(n);
const sealed = (n) => ({ sealed: 'p1:' + Buffer.alloc(Math.ceil((n * 3) / 4), 7).toString('base64'), keyId: 'k-2026010112-abcd1234' });
/** One busy phone's day: [type, count, data]. */
const DAY_MIX = [
  ['phone.connected', 40, { connId: text(36), tokenPrefix: 'abcd1234', deviceId: 'pixel-8', ip: '192.0.2.10' }],
  ['phone.disconnected', 40, { connId: text(36), tokenPrefix: 'abcd1234', code: 1006, reason: 'network lost' }],
  ['session.seen', 96, { tokenPrefix: 'abcd1234' }],
  ['notification.posted', 300, { entryId: text(36), tokenPrefix: 'abcd1234', packageName: 'com.example.chat', ...sealed(180), postedAt: 1 }],
  ['notification.removed', 100, { entryId: text(36), tokenPrefix: 'abcd1234' }],
  ['phone.message_posted', 40, { messageId: text(36), chatId: 'main', ...sealed(400) }],
  ['phone.message_delivered', 40, { messageId: text(36), tokenPrefix: 'abcd1234' }],
  ['phone.reply_received', 20, { replyId: text(36), chatId: 'main', ...sealed(200) }],
  ['bridge.command_sent', 80, { requestId: text(36), tokenPrefix: 'abcd1234', action: 'tap', params: { x: 540, y: 1200 } }],
  ['bridge.command_answered', 80, { requestId: text(36), ok: true, ms: 210, result: { screen: 'com.example/.Main' } }],
  ['bridge.safety_decided', 20, { decision: 'allowed', tokenPrefix: 'abcd1234', requestId: text(36), rule: null }],
  ['terminal.opened', 6, { shellId: text(36), sessionName: 'main', tokenPrefix: 'abcd1234', cols: 80, rows: 24 }],
  ['terminal.closed', 6, { shellId: text(36), sessionName: 'main', exitCode: 0 }],
  ['media.registered', 10, { token: text(22), path: '/home/u/shots/' + text(20) + '.png', bytes: 123456, sensitive: false }],
  ['clipboard.staged', 4, { entryId: text(36), tokenPrefix: 'abcd1234', ...sealed(120) }],
];
const PER_DAY = DAY_MIX.reduce((n, [, c]) => n + c, 0);

function liveBytes(dir) {
  return events.liveSegments(dir).reduce((n, s) => n + fs.statSync(path.join(dir, s.file)).size, 0);
}

async function year(segmentMb) {
  const dir = path.join(tempDir('svc-bench-retention-'), 'events');
  const store = new events.FileEventStore({ dir, segmentBytes: segmentMb * 1024 * 1024, onDurable: () => undefined });
  await store.open({ fromSeq: 1, onEvent: () => undefined });
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  let written = 0;
  let peak = 0;
  let prunes = 0;
  for (let day = 0; day < 365; day++) {
    const batch = [];
    for (const [type, count, data] of DAY_MIX) for (let i = 0; i < count; i++) batch.push({ type, data });
    // A day's events spread over its hours (the `at` the cut is judged by); one append per hour.
    for (let h = 0; h < 24; h++) {
      const part = batch.slice(Math.floor((h * batch.length) / 24), Math.floor(((h + 1) * batch.length) / 24));
      store.append(part, new Date(start + day * 86_400_000 + h * 3_600_000).toISOString(), 'device:abcd1234');
    }
    await store.drain();
    written += PER_DAY;
    const now = start + (day + 1) * 86_400_000;
    const plan = events.planPrune(dir, { before: new Date(now - DAYS * 86_400_000), snapshotSeq: store.lastSeq });
    if (plan) {
      const data = {
        cutSeq: plan.cutSeq,
        cutHash: plan.cutHash,
        cutAt: plan.cutAt,
        segments: plan.drop.map((s) => s.file),
        archive: null,
        snapshotSeq: store.lastSeq,
        by: 'retention',
      };
      await store.append([{ type: 'log.pruned', data }], new Date(now).toISOString(), 'system').durable;
      events.applyPrune(dir, plan, null);
      prunes++;
    }
    peak = Math.max(peak, liveBytes(dir));
  }
  await store.close();
  const t0 = process.hrtime.bigint();
  const r = events.scanLog(dir, { fromSeq: 1 });
  const verifyMs = Number(process.hrtime.bigint() - t0) / 1e6;
  return { segmentMb, written, prunes, peak, end: liveBytes(dir), from: r.cut ? r.cut.cutSeq + 1 : 1, lastSeq: r.lastSeq, verifyMs };
}

(async () => {
  const mib = (b) => (b / 1048576).toFixed(1) + ' MiB';
  console.log(`a busy phone: ${PER_DAY} events a day for 365 days; retention ${DAYS} days`);
  for (const mb of values['segment-mb'].split(',').map(Number)) {
    const r = await year(mb);
    console.log(
      `segments of ${mb} MiB: ${r.written} events written, ${r.prunes} prunes; live log at most ${mib(r.peak)}, at the end ${mib(r.end)} ` +
        `(seq ${r.from}..${r.lastSeq}), verified in ${r.verifyMs.toFixed(0)} ms`,
    );
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
