'use strict';
// `npm run bench`: runs every bench/*.js (except this runner and _helpers), one after another, each in
// its own process so one benchmark's heap and JIT state never colours the next. Pass names to run a
// subset: `node bench/run.js spine-http spine-replay`.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const wanted = process.argv.slice(2).map((a) => a.replace(/\.js$/, ''));
const files = fs
  .readdirSync(__dirname)
  .filter((f) => f.endsWith('.js') && f !== 'run.js' && !f.startsWith('_'))
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace(/\.js$/, '')))
  .sort();
if (files.length === 0) {
  console.error(`bench: nothing matches ${wanted.join(', ')}`);
  process.exit(2);
}
console.log(
  `# svc relay benchmarks, ${new Date().toISOString()}, node ${process.version}, ${require('node:os').cpus().length} CPUs, load average ${require('node:os')
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
let failed = 0;
for (const f of files) {
  console.log(`\n# ${f}`);
  const t = Date.now();
  const r = spawnSync(process.execPath, [path.join(__dirname, f)], { stdio: 'inherit' });
  console.log(`# ${f}: ${r.status === 0 ? 'done' : `FAILED (exit ${r.status ?? r.signal})`} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
