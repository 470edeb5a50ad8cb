// The cost of a screen an agent can use (issue 40, item 1): a phone's full-size PNG (1440x3120, the phone
// simulator's, cards and text-like detail) scaled by sharp to a long side of 2000 px and encoded as JPEG,
// WebP or PNG: the relay's own function (dist/apps/relay/src/mcp/screen-image.js), in process, one at a
// time (as one tool call makes one), after a warm-up. Median and p90 ms per screenshot, and the bytes out.
//
// Build first:  npm run build
// Run:          node bench/mcp-screens.js [--rounds 15]
'use strict';
const { dist, median } = require('./_lib');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const ROUNDS = Number(arg('rounds', 15));
const { screenImage } = dist('apps/relay/src/mcp/screen-image.js');
const { makePng } = dist('apps/phone-sim/src/png.js');

async function main() {
  const phone = { width: 1440, height: 3120 };
  const png = makePng(phone.width, phone.height, 7);
  console.log(`phone PNG ${phone.width}x${phone.height}, ${(png.length / 1024).toFixed(0)} KiB; ${ROUNDS} rounds each after 2 warm-up`);
  console.log('format      quality  out           bytes    p50 ms   p90 ms');
  for (const [format, quality] of [
    ['jpeg', 80],
    ['webp', 80],
    ['png', 80],
  ]) {
    const req = { maxSide: 2000, format, quality };
    for (let i = 0; i < 2; i++) await screenImage(png, phone, req);
    const ms = [];
    let meta;
    for (let i = 0; i < ROUNDS; i++) {
      const t = process.hrtime.bigint();
      ({ meta } = await screenImage(png, phone, req));
      ms.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    const p90 = [...ms].sort((a, b) => a - b)[Math.min(ms.length - 1, Math.floor(ms.length * 0.9))];
    console.log(
      `${format.padEnd(11)} ${String(format === 'png' ? '-' : quality).padEnd(8)} ${`${meta.width}x${meta.height}`.padEnd(13)} ${String(meta.bytes).padEnd(8)} ${median(ms).toFixed(1).padStart(6)}   ${p90.toFixed(1).padStart(6)}`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
