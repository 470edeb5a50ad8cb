'use strict';
// Issue 27, start-up and idle memory: what requiring a module graph alone costs, nothing started. Alternates fresh
// processes that require (a) the relay's graph (dist/apps/relay/src/relay.js, everything `svc relay start` loads
// before it runs) and (b) Nest 11's own (core, common, platform-fastify, platform-ws, websockets, ws); prints the
// medians of the time to require and of the RSS right after, and their ratio.
//   node bench/require-floor.js [--runs 8]
const { execFileSync } = require('node:child_process');
const { parseArgs } = require('node:util');
const { ROOT, DIST, median } = require('./_lib');

const { values } = parseArgs({ options: { runs: { type: 'string', default: '8' } } });
const RUNS = Number(values.runs);
if (!(RUNS >= 2)) {
  console.error('usage: node bench/require-floor.js [--runs N] (N >= 2)');
  process.exit(2);
}
const relayEntry = require('node:path').join(DIST, 'apps/relay/src/relay.js');
if (!require('node:fs').existsSync(relayEntry)) {
  console.error('bench: dist/ is missing; run "npm run build" first');
  process.exit(1);
}
const measure = (requires) =>
  `const t = process.hrtime.bigint(); ${requires}; ` +
  'process.stdout.write(JSON.stringify({ ms: Number(process.hrtime.bigint() - t) / 1e6, rss: process.memoryUsage().rss / 1048576, modules: Object.keys(require.cache).length }))';
const graphs = {
  relay: measure(`require(${JSON.stringify(relayEntry)})`),
  nest: measure(
    ['reflect-metadata', '@nestjs/core', '@nestjs/common', '@nestjs/platform-fastify', '@nestjs/platform-ws', '@nestjs/websockets', 'ws']
      .map((m) => `require('${m}')`)
      .join('; '),
  ),
};
const runs = { relay: [], nest: [] };
for (let i = 0; i < RUNS; i++)
  for (const k of i % 2 ? ['nest', 'relay'] : ['relay', 'nest'])
    runs[k].push(JSON.parse(execFileSync(process.execPath, ['-e', graphs[k]], { cwd: ROOT }).toString()));
const m = (k, f) => median(runs[k].map((r) => r[f]));
console.log(`require-floor ${new Date().toISOString().slice(0, 16)}Z, node ${process.version}, ${RUNS} runs each, alternating\n`);
console.log('| graph | modules | require, ms (median) | RSS after, MiB (median) |');
console.log('|---|---:|---:|---:|');
for (const k of ['relay', 'nest'])
  console.log(
    `| ${k === 'relay' ? "the relay's (dist/apps/relay/src/relay.js)" : "Nest 11's own"} | ${m(k, 'modules')} | ${m(k, 'ms').toFixed(0)} | ${m(k, 'rss').toFixed(1)} |`,
  );
console.log(
  `\nratio relay / Nest: require ${(m('relay', 'ms') / m('nest', 'ms')).toFixed(2)}x, RSS ${(m('relay', 'rss') / m('nest', 'rss')).toFixed(2)}x`,
);
console.log(
  `RESULT ${JSON.stringify({ relay: { ms: m('relay', 'ms'), rss: m('relay', 'rss') }, nest: { ms: m('nest', 'ms'), rss: m('nest', 'rss') } })}`,
);
