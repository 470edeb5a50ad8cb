'use strict';
// Issue 13: relay voice with the offline provider, against the same programs run bare in the same run.
//   - POST /voice/synthesize (API voice from loopback; a 200-character sentence) against espeak-ng | lame
//     spawned directly on the same text;
//   - POST /voice/transcribe of a 2.5 s WAV against pocketsphinx_continuous run directly on the same audio
//     already at 16 kHz.
//   - the same two routes through the OpenAI-compatible provider against a fake provider on loopback, against
//     calling that fake directly (the relay's own overhead; issue 13 asks p50 added <= 2 ms);
//   - the streaming output session: time from response.create to the first audio frame, against espeak-ng's
//     own time to its first bytes;
//   - --sessions (default 50) output sessions streaming at once: all complete, first-frame p50 under load.
// Sequential requests; medians of --n (default 20) each, rounds interleaved.
//   node bench/voice.js [--n 20]   (after npm run build; needs espeak-ng, lame, pocketsphinx, pocketsphinx-en-us)
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { dist, median, tempDir, report } = require('./_lib');

const { createRelay } = dist('apps/relay/src/relay.js');
const { loadConfig } = dist('apps/relay/src/common/config/config.js');
const { readWav, resample, writeWav16 } = dist('apps/relay/src/voice/wav.js');

const { values } = parseArgs({ options: { n: { type: 'string', default: '20' }, sessions: { type: 'string', default: '50' } } });
const N = Number(values.n);
const SESSIONS = Number(values.sessions);
const http = require('node:http');
const { spawn } = require('node:child_process');
const WebSocket = require('ws');
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
  // ---- the OpenAI-compatible provider against a fake on loopback ----------------------------------------
  const MP3 = Buffer.alloc(16 * 1024, 7);
  const fake = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/audio/speech') {
        res.setHeader('content-type', 'audio/mpeg');
        return res.end(MP3);
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ text: 'hello world' }));
    });
  });
  await new Promise((r) => fake.listen(0, '127.0.0.1', r));
  const fakeBase = `http://127.0.0.1:${fake.address().port}/v1`;
  const home2 = tempDir('svc-bench-voice-');
  const cloud = await createRelay({
    config: loadConfig({
      SVC_HOME: home2,
      RELAY_HOST: '127.0.0.1',
      RELAY_PORT: '0',
      RELAY_LOG_LEVEL: 'ERROR',
      API_SERVER_KEY: KEY,
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: fakeBase,
      PATH: process.env.PATH,
    }),
  });
  const viaRelay = async (route, init) => {
    const t0 = process.hrtime.bigint();
    const res = await fetch(`${cloud.url}${route}`, init);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${route} ${res.status}`);
    return ms(t0);
  };
  const direct = async (route, init) => {
    const t0 = process.hrtime.bigint();
    const res = await fetch(`${fakeBase}${route}`, init);
    await res.arrayBuffer();
    return ms(t0);
  };
  const synthInit = { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ text: TEXT }) };
  const directSynth = {
    method: 'POST',
    headers: { authorization: 'Bearer sk-bench', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: TEXT, response_format: 'mp3' }),
  };
  const sttInit = () => ({ method: 'POST', headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: form });
  const directStt = () => {
    const f = new FormData();
    f.append('file', new Blob([wav], { type: 'audio/wav' }), 'a.wav');
    f.append('model', 'whisper-1');
    return { method: 'POST', headers: { authorization: 'Bearer sk-bench' }, body: f };
  };
  const cs = [],
    ds = [],
    ct = [],
    dt = [];
  for (let i = 0; i < 5; i++) {
    await viaRelay('/voice/synthesize', synthInit);
    await direct('/audio/speech', directSynth);
  }
  for (let i = 0; i < N * 5; i++) {
    cs.push(await viaRelay('/voice/synthesize', synthInit));
    ds.push(await direct('/audio/speech', directSynth));
    ct.push(await viaRelay('/voice/transcribe', sttInit()));
    dt.push(await direct('/audio/transcriptions', directStt()));
  }
  await cloud.close('bench done');
  await new Promise((r) => fake.close(r));
  fs.rmSync(home2, { recursive: true, force: true });

  // ---- the streaming output session: first frame ----------------------------------------------------------
  const firstFrame = async () => {
    const created = await (
      await fetch(`${relay.url}/voice/output/session`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' })
    ).json();
    const ws = new WebSocket(`${relay.url.replace('http', 'ws')}${created.websocket_path}`, { headers: auth });
    await new Promise((r) => ws.once('message', r));
    const t0 = process.hrtime.bigint();
    let first = null;
    await new Promise((resolve) => {
      ws.on('message', (d) => {
        const f = JSON.parse(String(d));
        if (f.type === 'voice.audio.delta' && first === null) first = ms(t0);
        if (f.type === 'voice.response.done' || f.type === 'voice.error') resolve();
      });
      ws.send(JSON.stringify({ type: 'response.create', text: TEXT }));
    });
    ws.close();
    return first;
  };
  const bareFirst = () =>
    new Promise((resolve) => {
      const t0 = process.hrtime.bigint();
      const c = spawn('espeak-ng', ['-v', 'en-us', '--stdout'], { stdio: ['pipe', 'pipe', 'ignore'] });
      let got = 0;
      let first = null;
      c.stdout.on('data', (d) => {
        got += d.length;
        if (first === null && got >= 44 + 4410) first = ms(t0);
      });
      c.on('close', () => resolve(first));
      c.stdin.end(TEXT);
    });
  const rf = [],
    bf = [];
  for (let i = 0; i < N; i++) {
    rf.push(await firstFrame());
    bf.push(await bareFirst());
  }
  // ---- many sessions at once --------------------------------------------------------------------------------
  const t0 = process.hrtime.bigint();
  const loaded = await Promise.all(Array.from({ length: SESSIONS }, () => firstFrame()));
  const allMs = ms(t0);
  const completed = loaded.filter((x) => x !== null).length;

  await relay.close('bench done');
  fs.rmSync(home, { recursive: true, force: true });
  report(`relay voice, offline provider (${N} sequential requests each, medians)`, [
    ['what', 'relay ms', 'bare programs ms', 'ratio'],
    ['synthesize 200 characters (espeak-ng + lame -> MP3)', median(rs).toFixed(1), median(bs).toFixed(1), (median(rs) / median(bs)).toFixed(2)],
    ['transcribe a 2.5 s WAV (pocketsphinx)', median(rt).toFixed(1), median(bt).toFixed(1), (median(rt) / median(bt)).toFixed(2)],
  ]);
  const p50 = (xs) => median(xs);
  report(`relay voice through the OpenAI-compatible provider against a fake on loopback (${N * 5} sequential each, medians)`, [
    ['what', 'via the relay ms', 'the fake directly ms', 'added ms'],
    ['synthesize (200 characters -> 16 KiB MP3)', p50(cs).toFixed(2), p50(ds).toFixed(2), (p50(cs) - p50(ds)).toFixed(2)],
    ['transcribe (a ~2.5 s WAV, multipart in and out)', p50(ct).toFixed(2), p50(dt).toFixed(2), (p50(ct) - p50(dt)).toFixed(2)],
  ]);
  report(`streaming output session, offline provider (${N} sessions one after another; then ${SESSIONS} at once)`, [
    ['what', 'ms'],
    ['response.create -> first 100 ms audio frame, p50', p50(rf).toFixed(1)],
    ['espeak-ng spawn -> its first 100 ms of audio (bare), p50', p50(bf).toFixed(1)],
    [`${SESSIONS} sessions at once: completed`, `${completed}/${SESSIONS}`],
    [`${SESSIONS} sessions at once: first frame p50 / all done`, `${p50(loaded.filter((x) => x !== null)).toFixed(1)} / ${allMs.toFixed(0)}`],
  ]);
  console.log(
    `\nRESULT ${JSON.stringify({ synth: { relay: median(rs), bare: median(bs) }, stt: { relay: median(rt), bare: median(bt) }, cloudAdded: { synth: p50(cs) - p50(ds), stt: p50(ct) - p50(dt) }, firstFrame: { relay: p50(rf), bare: p50(bf) }, sessions: { n: SESSIONS, completed, allMs } })}`,
  );
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
