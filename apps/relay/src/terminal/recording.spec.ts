import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { nodeRecordingFs, Recording, type RecordingFs, type RecordingOptions } from './recording';
import { CastSealer, openedCast } from './sealed-cast';

const header = { width: 80, height: 24, timestamp: 1772366400, shell: '/bin/bash', term: 'xterm-256color', title: 'main (abcd1234)' };

function tmpFile(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-recording-')), 'r.cast');
}

/** A recording whose clock is stepped by hand. */
function recording(opts: Partial<RecordingOptions> = {}) {
  let t = 0;
  const file = opts.file ?? tmpFile();
  const rec = new Recording({ file, header, maxBytes: 1024 * 1024, input: false, elapsed: () => t, ...opts });
  return { rec, file, step: (s: number) => (t += s) };
}

const lines = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as unknown);

describe('Recording (asciicast v2)', () => {
  it('writes the header, then output and resize lines with their times; the digest is the file', async () => {
    const { rec, file, step } = recording();
    step(0.25);
    rec.output('$ echo hi\r\n');
    step(0.5);
    rec.resize(132, 43);
    rec.resize(132, 43); // unchanged: no line
    step(1.000_000_4);
    rec.output('hi "€"\r\n');
    const result = await rec.finish();
    expect(lines(file)).toEqual([
      { version: 2, width: 80, height: 24, timestamp: 1772366400, env: { SHELL: '/bin/bash', TERM: 'xterm-256color' }, title: 'main (abcd1234)' },
      [0.25, 'o', '$ echo hi\r\n'],
      [0.75, 'r', '132x43'],
      [1.75, 'o', 'hi "€"\r\n'],
    ]);
    const bytes = fs.readFileSync(file);
    expect(result).toEqual({
      sizeBytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      durationMs: 1750,
      truncated: false,
      stopped: null,
      input: false,
    });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('never records typed input unless asked to', async () => {
    const off = recording();
    off.rec.input('hunter2\r');
    off.rec.output('ok');
    await off.rec.finish();
    expect(fs.readFileSync(off.file, 'utf8')).not.toContain('hunter2');
    expect(lines(off.file).slice(1)).toEqual([[0, 'o', 'ok']]);

    const on = recording({ input: true });
    on.rec.input('ls\r');
    expect((await on.rec.finish()).input).toBe(true);
    expect(lines(on.file).slice(1)).toEqual([[0, 'i', 'ls\r']]);
  });

  it('stops writing output at the cap, keeps whole lines, and says it was truncated', async () => {
    const { rec, file } = recording({ maxBytes: 400 });
    for (let i = 0; i < 50; i++) rec.output(`line ${i} ${'x'.repeat(20)}\r\n`);
    const result = await rec.finish();
    expect(result).toMatchObject({ truncated: true, stopped: 'max_bytes' });
    expect(result.sizeBytes).toBeLessThanOrEqual(400);
    const parsed = lines(file);
    expect(parsed.length).toBeGreaterThan(3);
    expect(parsed.length).toBeLessThan(20);
    expect(parsed[parsed.length - 1]).toEqual([0, 'o', expect.stringMatching(/^line \d+ x+\r\n$/)]);
  });

  it('refuses to open an existing file (a recording never overwrites one)', () => {
    const file = tmpFile();
    fs.writeFileSync(file, 'earlier');
    expect(() => recording({ file })).toThrow(/EEXIST/);
    expect(fs.readFileSync(file, 'utf8')).toBe('earlier');
  });

  it('writes in order, one write at a time, then fsync, then close: finish resolves only after the fsync', async () => {
    const calls: string[] = [];
    let release: (() => void) | null = null;
    const slow: RecordingFs = {
      ...nodeRecordingFs,
      async write(fd, buf) {
        calls.push(`write ${buf.length}`);
        // The first write is held: later output must queue behind it, not overtake it.
        if (calls.length === 1) await new Promise<void>((r) => (release = r));
        await nodeRecordingFs.write(fd, buf);
      },
      async fsync(fd) {
        calls.push('fsync');
        await nodeRecordingFs.fsync(fd);
      },
      async close(fd) {
        calls.push('close');
        await nodeRecordingFs.close(fd);
      },
    };
    const { rec, file } = recording({ fs: slow, flushBytes: 100 });
    rec.output('a'.repeat(200)); // past flushBytes with the header: a write starts at once
    rec.output('b'.repeat(10));
    let finished = false;
    const done = rec.finish().then((r) => ((finished = true), r));
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toEqual([expect.stringMatching(/^write /)]);
    expect(finished).toBe(false);
    release!();
    const result = await done;
    const kinds = calls.map((c) => c.split(' ')[0]);
    expect(kinds.slice(-2)).toEqual(['fsync', 'close']);
    expect(kinds.slice(0, -2).every((k) => k === 'write')).toBe(true);
    expect(kinds.length).toBeGreaterThanOrEqual(4);
    const text = fs.readFileSync(file, 'utf8');
    expect(text.indexOf('aaaa')).toBeLessThan(text.indexOf('bbbb'));
    expect(result.sizeBytes).toBe(Buffer.byteLength(text));
  });

  it('flushes on its timer, so a crash loses at most the last second', async () => {
    const { rec, file } = recording({ flushMs: 30 });
    rec.output('early output');
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    const deadline = Date.now() + 2000;
    while (!fs.readFileSync(file, 'utf8').includes('early output') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(fs.readFileSync(file, 'utf8')).toContain('early output');
    await rec.finish();
  });

  it('bounds what one shell holds while the disk does not answer: recording stops, the shell is not held', async () => {
    const stalled: RecordingFs = { ...nodeRecordingFs, write: () => new Promise(() => undefined) };
    const { rec } = recording({ fs: stalled, flushBytes: 1024, maxPendingBytes: 64 * 1024 });
    for (let i = 0; i < 1000; i++) rec.output('z'.repeat(1000));
    expect(rec.truncated).toBe(true);
    expect(rec.stopped).toBe('disk_stalled');
  });

  it('asks before each write; a refusal stops it there, and nothing queued behind it is written (no gap in the file)', async () => {
    const asked: number[] = [];
    const stops: string[] = [];
    const { rec, file } = recording({
      flushBytes: 100,
      // The header is one write (past flushBytes alone), the a's the second; the b's are refused.
      admit: (bytes) => (asked.push(bytes), asked.length >= 3 ? 'total_bytes' : null),
      onStop: (reason) => stops.push(reason),
    });
    rec.output('a'.repeat(200));
    rec.output('b'.repeat(200));
    rec.output('c'.repeat(200));
    const result = await rec.finish();
    expect(result).toMatchObject({ truncated: true, stopped: 'total_bytes' });
    expect(stops).toEqual(['total_bytes']);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toContain('aaaa');
    expect(text).not.toMatch(/bbbb|cccc/);
    expect(result.sizeBytes).toBe(Buffer.byteLength(text));
    expect(result.sha256).toBe(createHash('sha256').update(text).digest('hex'));
  });

  it('sealed: the file holds the same asciicast under its key, the size cap counts the sealed bytes, the digest is of the file', async () => {
    const key = randomBytes(32);
    const id = '11111111-2222-4333-8444-555555555555';
    const { rec, file, step } = recording({ sealer: new CastSealer(id, 'aaaa1111:2026-03-01T12:0000abcd', key), maxBytes: 600, flushBytes: 100 });
    for (let i = 0; i < 20; i++) {
      step(0.1);
      rec.output(`secret line ${i}\r\n`);
    }
    const result = await rec.finish();
    expect(result).toMatchObject({ truncated: true, stopped: 'max_bytes' });
    const bytes = fs.readFileSync(file);
    expect(bytes.length).toBeLessThanOrEqual(600);
    expect(bytes.toString('latin1')).not.toContain('secret line');
    expect(result.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    let text = '';
    for await (const chunk of openedCast(file, id, key)) text += chunk.toString('utf8');
    const parsed = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as unknown);
    expect(parsed[0]).toMatchObject({ version: 2, width: 80 });
    expect(parsed[1]).toEqual([0.1, 'o', 'secret line 0\r\n']);
  });
});
