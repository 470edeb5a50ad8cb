'use strict';
// Issue 13: relay voice with the offline provider, against the same programs run bare in the same run.
//   - POST /voice/synthesize (API voice from loopback; a 200-character sentence) against espeak-ng | lame
//     spawned directly on the same text;
//   - POST /voice/transcribe of a 2.5 s WAV against pocketsphinx_continuous run directly on the same audio
//     already at 16 kHz.
// Sequential requests; medians of --n (default 20) each, rounds interleaved.
//   node bench/voice.js [--n 20]   (after npm run build; needs espeak-ng, lame, pocketsphinx, pocketsphinx-en-us)
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { dist, median, tempDir, report } = require('./_lib');

const { createRelay } = dist('apps/relay/src/relay.js');
const { loadConfig } = dist('apps/relay/src/common/config.js');
const { readWav, resample, writeWav16 } = dist('apps/relay/src/voice/wav.js');

const { values } = parseArgs({ options: { n: { type: 'string', default: '20' } } });
const N = Number(values.n);
const KEY = 'bench-voice-api-key-0123456789';
const TEXT =
  'The relay turned this sentence into speech on this machine, with no network at all, and sent it back as an MP3 file to the phone that asked.'.slice(
    0,
    200,
  );
const MODEL = '/usr/share/pocketsphinx/model/en-us';

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

(async () => {
  const home = tempDir('svc-bench-voice-');
  const relay = await createRelay({
    config: loadConfig({
      SVC_HOME: home,
      RELAY_HOST: '127.0.0.1',
      RELAY_PORT: '0',
      RELAY_LOG_LEVEL: 'ERROR',
      API_SERVER_KEY: KEY,
      PATH: process.env.PATH,
    }),
  });
  const wav = execFileSync('espeak-ng', ['-v', 'en-us', '--stdout', 'hello world this is a test of the relay voice']);
  const wav16 = path.join(home, 'in16.wav');
  fs.writeFileSync(wav16, writeWav16(resample(readWav(wav), 16000)));
  const boundary = 'benchvoice';
  const form = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`),
    wav,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const auth = { authorization: `Bearer ${KEY}` };
  const relaySynth = async () => {
    const t0 = process.hrtime.bigint();
    const res = await fetch(`${relay.url}/voice/synthesize`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ text: TEXT }),
    });
    const b = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200 || b.length < 1000) throw new Error(`synthesize ${res.status}`);
    return ms(t0);
  };
  const bareSynth = () => {
    const t0 = process.hrtime.bigint();
    const w = spawnSync('espeak-ng', ['-v', 'en-us', '-s', '170', '--stdout'], { input: TEXT });
    const m = spawnSync('lame', ['--quiet', '-b', '64', '-', '-'], { input: w.stdout, maxBuffer: 64 << 20 });
    if (m.status !== 0 || m.stdout.length < 1000) throw new Error('bare synth failed');
    return ms(t0);
  };
  const relayStt = async () => {
    const t0 = process.hrtime.bigint();
    const res = await fetch(`${relay.url}/voice/transcribe`, {
      method: 'POST',
      headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: form,
    });
    const j = await res.json();
    if (res.status !== 200 || typeof j.text !== 'string') throw new Error(`transcribe ${res.status} ${JSON.stringify(j)}`);
    return ms(t0);
  };
  const bareStt = () => {
    const t0 = process.hrtime.bigint();
    const r = spawnSync('pocketsphinx_continuous', [
      '-infile',
      wav16,
      '-hmm',
      `${MODEL}/en-us`,
      '-lm',
      `${MODEL}/en-us.lm.bin`,
      '-dict',
      `${MODEL}/cmudict-en-us.dict`,
      '-logfn',
      '/dev/null',
    ]);
    if (r.status !== 0) throw new Error('bare stt failed');
    return ms(t0);
  };
  const rs = [],
    bs = [],
    rt = [],
    bt = [];
  await relaySynth();
  bareSynth();
  for (let i = 0; i < N; i++) {
    if (i % 2 === 0) {
      bs.push(bareSynth());
      rs.push(await relaySynth());
      bt.push(bareStt());
      rt.push(await relayStt());
    } else {
      rs.push(await relaySynth());
      bs.push(bareSynth());
      rt.push(await relayStt());
      bt.push(bareStt());
    }
  }
  await relay.close('bench done');
  fs.rmSync(home, { recursive: true, force: true });
  report(`relay voice, offline provider (${N} sequential requests each, medians)`, [
    ['what', 'relay ms', 'bare programs ms', 'ratio'],
    ['synthesize 200 characters (espeak-ng + lame -> MP3)', median(rs).toFixed(1), median(bs).toFixed(1), (median(rs) / median(bs)).toFixed(2)],
    ['transcribe a 2.5 s WAV (pocketsphinx)', median(rt).toFixed(1), median(bt).toFixed(1), (median(rt) / median(bt)).toFixed(2)],
  ]);
  console.log(`\nRESULT ${JSON.stringify({ synth: { relay: median(rs), bare: median(bs) }, stt: { relay: median(rt), bare: median(bt) } })}`);
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
