import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bearer, pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/**
 * The security issue's items 3 and 4 replayed over a real relay: uploads that make ffmpeg read other local
 * files (an HLS playlist, a concat script), and offline speech to text without bounds (hours of
 * compressed silence, forty transcriptions at once, a caller who hangs up, a job past its time bound).
 */
jest.setTimeout(120_000);

const NO_CLOUD = { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' };

function multipart(file: Buffer, type: string, name: string): { body: Buffer; headers: Record<string, string> } {
  const boundary = '----svcstt' + Math.random().toString(16).slice(2);
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(head), file, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

type Answer = { status: number; retryAfter: string | null; text: string; body: Record<string, any> };

async function transcribe(relay: TestRelay, token: string, file: Buffer, type: string, name = 'audio', signal?: AbortSignal): Promise<Answer> {
  const m = multipart(file, type, name);
  const res = await fetch(`${relay.url}/voice/transcribe`, { method: 'POST', headers: { ...m.headers, ...bearer(token) }, body: m.body, signal });
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text, body: JSON.parse(text) as Record<string, any> };
}

/** Speech programs the relay (running in this process) has as children right now. */
function speechChildren(which = /ffmpeg|pocketsphinx|lame/): Promise<number> {
  return new Promise((resolve) =>
    execFile('pgrep', ['-l', '-P', String(process.pid)], (_err, stdout) => resolve(stdout.split('\n').filter((l) => which.test(l)).length)),
  );
}

/** Samples `probe` every `everyMs` until `stop` settles; the largest value seen. */
async function peakWhile<T>(stop: Promise<T>, probe: () => Promise<number>, everyMs = 25): Promise<{ result: T; peak: number }> {
  let done = false;
  let peak = 0;
  const loop = (async () => {
    while (!done) {
      peak = Math.max(peak, await probe());
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  const result = await stop.finally(() => (done = true));
  await loop;
  return { result, peak };
}

async function until(what: string, cond: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const ffmpeg = (...args: string[]) => execFileSync('ffmpeg', ['-nostdin', '-loglevel', 'error', '-y', ...args]);

describe('offline speech to text: only the audio uploaded is read (item 3)', () => {
  let relay: TestRelay;
  let token: string;
  let dir: string;
  const file = (name: string) => fs.readFileSync(path.join(dir, name));
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(tempHome(), 'stt-files-'));
    fs.writeFileSync(path.join(dir, 'speech.wav'), execFileSync('espeak-ng', ['-v', 'en-us', '--stdout', 'hello world']));
    // The local file the attacker wants read: speech the relay would transcribe if ffmpeg opened it.
    ffmpeg('-i', path.join(dir, 'speech.wav'), '-c:a', 'aac', path.join(dir, 'secret.m4a'));
    relay = await startRelay({ env: NO_CLOUD });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  const noLeak = (a: Answer) => {
    expect(a.body.text).toBeUndefined();
    expect(a.text).not.toMatch(/hello|world/i);
    expect(a.text).not.toContain(dir);
    expect(a.text).not.toContain(os.tmpdir());
    expect(a.text).not.toMatch(/svc-stt|\/tmp\//);
  };

  it('the local file itself is speech the relay transcribes (the control)', async () => {
    const a = await transcribe(relay, token, file('secret.m4a'), 'audio/mp4', 'voice.m4a');
    expect(a.status).toBe(200);
    expect(a.body.text).toMatch(/hello|world/);
  });

  it('an HLS playlist naming the local .m4a, sent as audio/mpeg, is 415 with no transcript and no path', async () => {
    const secret = path.join(dir, 'secret.m4a');
    for (const playlist of [
      `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${secret}\n#EXT-X-ENDLIST\n`,
      `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nfile:${secret}\n#EXT-X-ENDLIST\n`,
    ]) {
      const a = await transcribe(relay, token, Buffer.from(playlist), 'audio/mpeg', 'voice.mp3');
      expect(a.status).toBe(415);
      expect(a.body).toMatchObject({ ok: false, success: false, code: 'voice.unsupported_audio' });
      noLeak(a);
    }
  });

  it('a concat-demuxer script naming the local file is 415 likewise', async () => {
    for (const script of [`ffconcat version 1.0\nfile '${path.join(dir, 'secret.m4a')}'\n`, `ffconcat version 1.0\nfile 'secret.m4a'\n`]) {
      const a = await transcribe(relay, token, Buffer.from(script), 'audio/mp4', 'voice.m4a');
      expect(a.status).toBe(415);
      expect(a.body.code).toBe('voice.unsupported_audio');
      noLeak(a);
    }
  });

  it('a playlist dressed in audio magic bytes reaches only the demuxer those bytes name: 415 undecodable, no transcript, no path', async () => {
    const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${path.join(dir, 'secret.m4a')}\n#EXT-X-ENDLIST\n`;
    for (const [magic, type] of [
      ['ID3', 'audio/mpeg'],
      ['\x00\x00\x00\x18ftypM4A ', 'audio/mp4'],
      ['OggS', 'audio/ogg'],
      ['fLaC', 'audio/flac'],
    ]) {
      const a = await transcribe(relay, token, Buffer.concat([Buffer.from(magic, 'latin1'), Buffer.from(playlist)]), type);
      expect(a.status).toBe(415);
      expect(a.body).toMatchObject({
        ok: false,
        code: 'voice.undecodable_audio',
        error: 'ffmpeg could not decode the audio (unsupported or damaged format)',
      });
      noLeak(a);
    }
  });

  it('a damaged recording is a plain 415: ffmpeg output and temp paths stay in the relay log (debug)', async () => {
    const broken = Buffer.concat([file('secret.m4a').subarray(0, 40), Buffer.alloc(4000, 7)]);
    const a = await transcribe(relay, token, broken, 'audio/mp4', 'voice.m4a');
    expect(a.status).toBe(415);
    expect(a.body.code).toBe('voice.undecodable_audio');
    noLeak(a);
    expect(relay.logs.join('')).toContain('offline speech to text: a program failed');
  });

  it('what the clients record still transcribes: WAV, the app m4a, browser webm and ogg (Opus), FLAC, MP3, ADTS AAC', async () => {
    const src = path.join(dir, 'speech.wav');
    const made: Array<[string, string, string[]]> = [
      ['a.webm', 'audio/webm', ['-c:a', 'libopus']],
      ['a.ogg', 'audio/ogg', ['-c:a', 'libopus']],
      ['a.flac', 'audio/flac', ['-c:a', 'flac']],
      ['a.mp3', 'audio/mpeg', ['-c:a', 'libmp3lame']],
      ['a.aac', 'audio/aac', ['-c:a', 'aac', '-f', 'adts']],
    ];
    for (const [name, , args] of made) ffmpeg('-i', src, ...args, path.join(dir, name));
    const heard: Array<{ name: string; status: number; words: boolean }> = [];
    for (const [name, type] of [['speech.wav', 'audio/wav'], ['secret.m4a', 'audio/mp4'], ...made.map(([n, t]) => [n, t])]) {
      const a = await transcribe(relay, token, file(name), type, name);
      heard.push({ name, status: a.status, words: typeof a.body.text === 'string' && /[a-z]/.test(a.body.text) });
      if (name === 'speech.wav' || name === 'secret.m4a') expect(a.body.text).toMatch(/hello|world/);
    }
    // pocketsphinx hears each lossy codec's "hello world" a little differently; that it heard words is the point
    expect(heard).toEqual(heard.map(({ name }) => ({ name, status: 200, words: true })));
  });
});

describe('offline speech to text: bounded (item 4)', () => {
  let relay: TestRelay;
  let token: string;
  let dir: string;
  let short: Buffer;
  let long: Buffer;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(tempHome(), 'stt-bounds-'));
    const phrase = path.join(dir, 'phrase.wav');
    fs.writeFileSync(phrase, execFileSync('espeak-ng', ['-v', 'en-us', '--stdout', 'the quick brown fox jumps over the lazy dog, hello world']));
    short = execFileSync('espeak-ng', ['-v', 'en-us', '--stdout', 'hello world']);
    fs.writeFileSync(path.join(dir, 'short.wav'), short);
    // About 100 s of speech, under the 120 s bound: pocketsphinx needs far longer than the tests wait.
    ffmpeg('-stream_loop', '23', '-i', phrase, '-c:a', 'libopus', path.join(dir, 'long.ogg'));
    long = fs.readFileSync(path.join(dir, 'long.ogg'));
    // A short queue (the default is 8) keeps the test quick; a generous time bound keeps the queued
    // jobs from running out of wait on a loaded two-core host.
    relay = await startRelay({
      env: { ...NO_CLOUD, RELAY_VOICE_STT_MAX_CONCURRENT: '2', RELAY_VOICE_STT_MAX_QUEUE: '3', RELAY_VOICE_TIMEOUT_SECONDS: '180' },
    });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  it('a 1.5 MB FLAC of silence (about two hours at 8 kHz) is 413 at once; /health stays quick and memory flat meanwhile', async () => {
    const flac = path.join(dir, 'silence.flac');
    ffmpeg('-f', 'lavfi', '-i', 'anullsrc=r=8000:cl=mono', '-t', '7800', '-c:a', 'flac', '-sample_fmt', 's16', flac);
    const audio = fs.readFileSync(flac);
    expect(audio.length).toBeGreaterThan(1_400_000);
    expect(audio.length).toBeLessThan(1_700_000);
    if (global.gc) global.gc();
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const started = Date.now();
    const health = async () => {
      const t = performance.now();
      const res = await fetch(`${relay.url}/health`);
      await res.arrayBuffer();
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      return performance.now() - t;
    };
    const { result: a, peak: slowestHealthMs } = await peakWhile(transcribe(relay, token, audio, 'audio/flac', 'silence.flac'), health);
    const tookMs = Date.now() - started;
    expect(a.status).toBe(413);
    expect(a.body).toMatchObject({ ok: false, success: false, code: 'voice.audio_too_long', max_seconds: 120 });
    expect(a.body.error).toContain('RELAY_VOICE_STT_MAX_SECONDS');
    // 1.3 s beside two busy loops (the bound was 7.7 times that); decoding or recognising hours takes minutes.
    expect(tookMs).toBeLessThan(15_000);
    expect(slowestHealthMs).toBeLessThan(1_000);
    expect(rssPeak - rssBefore).toBeLessThan(150 * 1024 * 1024);
    expect(await speechChildren()).toBe(0);
  });

  it('40 transcriptions at once: at most 2 speech programs run, 3 wait, the rest are 503 voice.busy with Retry-After, none 500', async () => {
    const all = Promise.all(Array.from({ length: 40 }, () => transcribe(relay, token, short, 'audio/wav', 'a.wav')));
    const { result, peak } = await peakWhile(all, speechChildren, 20);
    const ok = result.filter((a) => a.status === 200);
    const busy = result.filter((a) => a.status === 503);
    expect(ok.length + busy.length).toBe(40);
    expect(peak).toBeGreaterThanOrEqual(1);
    expect(peak).toBeLessThanOrEqual(2);
    expect(ok.length).toBeGreaterThanOrEqual(5);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    for (const a of ok) expect(a.body.text).toMatch(/hello|world/);
    for (const a of busy) {
      expect(a.body).toMatchObject({ ok: false, success: false, code: 'voice.busy', retry_after: 5 });
      expect(a.retryAfter).toBe('5');
    }
    expect(await speechChildren()).toBe(0);
  });

  it('a caller who hangs up stops its transcription: the program is killed and the slot is free again', async () => {
    const abort = new AbortController();
    const pending = transcribe(relay, token, long, 'audio/ogg', 'long.ogg', abort.signal).catch((e: Error) => e);
    await until('recognition to be under way', async () => (await speechChildren(/pocketsphinx/)) > 0, 20_000);
    abort.abort();
    expect(await pending).toMatchObject({ name: 'AbortError' });
    await until('the speech programs to be gone', async () => (await speechChildren()) === 0, 3_000);
    const a = await transcribe(relay, token, short, 'audio/wav', 'a.wav');
    expect(a.status).toBe(200);
  });

  it('a transcription past RELAY_VOICE_TIMEOUT_SECONDS is 504 and its program killed', async () => {
    const quick = await startRelay({ env: { ...NO_CLOUD, RELAY_VOICE_TIMEOUT_SECONDS: '2' } });
    try {
      const p = await pairPhone(quick);
      p.phone.close();
      const started = Date.now();
      const a = await transcribe(quick, p.token, long, 'audio/ogg', 'long.ogg');
      expect(a.status).toBe(504);
      expect(a.body).toMatchObject({ ok: false, code: 'voice.provider_timeout' });
      expect(a.body.error).toContain('RELAY_VOICE_TIMEOUT_SECONDS');
      // Cut at the 2 s bound, not before it; 2.45 s beside two busy loops, so 10 s leaves 17 times the
      // loaded overshoot and is still far under recognising the 100 s recording.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_950);
      expect(Date.now() - started).toBeLessThan(10_000);
      await until('the speech programs to be gone', async () => (await speechChildren()) === 0, 2_000);
    } finally {
      await quick.close();
    }
  });

  it('audio past RELAY_VOICE_STT_MAX_SECONDS is 413, and audio under it still transcribes', async () => {
    const small = await startRelay({ env: { ...NO_CLOUD, RELAY_VOICE_STT_MAX_SECONDS: '5' } });
    try {
      const p = await pairPhone(small);
      p.phone.close();
      const wav = path.join(dir, 'ten.wav');
      ffmpeg('-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', '10', wav);
      for (const [audio, type] of [
        [fs.readFileSync(wav), 'audio/wav'],
        [long, 'audio/ogg'],
      ] as const) {
        const a = await transcribe(small, p.token, audio, type);
        expect(a.status).toBe(413);
        expect(a.body).toMatchObject({ code: 'voice.audio_too_long', max_seconds: 5 });
      }
      expect((await transcribe(small, p.token, short, 'audio/wav')).status).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('without ffmpeg: WAV still converted by the relay and MP3 streamed from lame, both under the bound; the rest is 415', async () => {
    const bin = fs.mkdtempSync(path.join(tempHome(), 'stt-bin-'));
    for (const prog of ['espeak-ng', 'lame', 'pocketsphinx_continuous'])
      fs.symlinkSync(execFileSync('which', [prog]).toString().trim(), path.join(bin, prog));
    const bare = await startRelay({ env: { ...NO_CLOUD, RELAY_VOICE_OFFLINE_BIN_DIR: bin, RELAY_VOICE_STT_MAX_SECONDS: '5' } });
    try {
      const p = await pairPhone(bare);
      p.phone.close();
      const stereo = path.join(dir, 'stereo44.wav');
      ffmpeg('-i', path.join(dir, 'short.wav'), '-ac', '2', '-ar', '44100', stereo);
      const mp3 = path.join(dir, 'short.mp3');
      ffmpeg('-i', path.join(dir, 'short.wav'), '-c:a', 'libmp3lame', mp3);
      for (const [name, type] of [
        ['short.wav', 'audio/wav'],
        ['stereo44.wav', 'audio/wav'],
        ['short.mp3', 'audio/mpeg'],
      ]) {
        const a = await transcribe(bare, p.token, fs.readFileSync(path.join(dir, name)), type, name);
        expect({ name, status: a.status, refusal: a.status === 200 ? null : a.body }).toEqual({ name, status: 200, refusal: null });
        expect(a.body.text).toMatch(name === 'short.wav' ? /hello|world/ : /[a-z]/);
      }
      const tenWav = path.join(dir, 'ten44.wav');
      ffmpeg('-f', 'lavfi', '-i', 'anullsrc=r=44100:cl=stereo', '-t', '10', tenWav);
      const tenMp3 = path.join(dir, 'ten.mp3');
      ffmpeg('-f', 'lavfi', '-i', 'anullsrc=r=44100:cl=stereo', '-t', '10', '-c:a', 'libmp3lame', tenMp3);
      for (const [file, type] of [
        [tenWav, 'audio/wav'],
        [tenMp3, 'audio/mpeg'],
      ]) {
        const a = await transcribe(bare, p.token, fs.readFileSync(file), type);
        expect(a.status).toBe(413);
        expect(a.body.code).toBe('voice.audio_too_long');
      }
      const ogg = await transcribe(bare, p.token, long, 'audio/ogg');
      expect(ogg.status).toBe(415);
      expect(ogg.body.error).toContain('ffmpeg, which is not installed');
      expect(await speechChildren()).toBe(0);
    } finally {
      await bare.close();
    }
  });
});
