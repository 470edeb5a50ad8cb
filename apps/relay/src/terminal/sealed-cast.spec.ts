import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { recoverRecording } from './recording-files';
import { CastSealer, CHUNK_OVERHEAD, DamagedCastError, openedCast, openedSize, openChunk, sealedHead, walkChunks } from './sealed-cast';

const ID = '11111111-2222-4333-8444-555555555555';
const KEY_ID = 'aaaa1111:2026-03-01T12:0000abcd';
const key = randomBytes(32);
const header = '{"version":2,"width":80,"height":24,"timestamp":1772366400}\n';

/** A sealed recording of `writes`, as the recorder writes it (one chunk a write). */
function sealedFile(writes: string[], id = ID): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sealed-')), `${id}.cast`);
  const sealer = new CastSealer(id, KEY_ID, key);
  fs.writeFileSync(file, Buffer.concat(writes.map((w) => sealer.seal(Buffer.from(w)))));
  return file;
}

async function opened(file: string, id = ID, k = key): Promise<string> {
  let text = '';
  for await (const chunk of openedCast(file, id, k)) text += chunk.toString('utf8');
  return text;
}

describe('sealed recordings (sealed-cast)', () => {
  const writes = [header, '[0.5, "o", "export AWS_SECRET_ACCESS_KEY=abc123"]\n', '[1.25, "o", "done"]\n'];

  it('hold no content in plain text; open back to the asciicast under their key, with its exact length', async () => {
    const file = sealedFile(writes);
    const raw = fs.readFileSync(file);
    expect(raw.toString('latin1')).not.toMatch(/AWS_SECRET|version|done/);
    expect(raw.toString('latin1').split('\n')[0]).toBe(JSON.stringify({ svc_sealed_cast: 1, key: KEY_ID }));
    expect(await opened(file)).toBe(writes.join(''));
    const fd = fs.openSync(file, 'r');
    const head = sealedHead(fd)!;
    expect(head.keyId).toBe(KEY_ID);
    expect(openedSize(fd, head.bodyStart)).toBe(Buffer.byteLength(writes.join('')));
    expect(raw.length - head.bodyStart).toBe(Buffer.byteLength(writes.join('')) + writes.length * CHUNK_OVERHEAD);
    fs.closeSync(fd);
  });

  it('do not open under another key, for another recording, or with chunks swapped', async () => {
    const file = sealedFile(writes);
    await expect(opened(file, ID, randomBytes(32))).rejects.toThrow(DamagedCastError);
    await expect(opened(file, '99999999-2222-4333-8444-555555555555')).rejects.toThrow(DamagedCastError);
    const fd = fs.openSync(file, 'r');
    const head = sealedHead(fd)!;
    const { chunks } = walkChunks(fd, head.bodyStart);
    expect(() => openChunk(fd, chunks[2], 1, ID, KEY_ID, key)).toThrow(DamagedCastError);
    fs.closeSync(fd);
  });

  it('a torn last chunk is cut at recovery, the rest kept; start and duration read under the key, none without it', async () => {
    const file = sealedFile(writes);
    const whole = fs.statSync(file).size;
    fs.appendFileSync(file, Buffer.from([0, 0, 0, 40, 1, 2, 3]));
    const found = await recoverRecording(file, ID, (id) => (id === KEY_ID ? key : undefined));
    expect(found).toMatchObject({ tornBytes: 7, sizeBytes: whole, startedAtMs: 1772366400_000, durationMs: 1250, keyId: KEY_ID });
    expect(await opened(file)).toBe(writes.join(''));
    const blind = await recoverRecording(file, ID, () => undefined);
    expect(blind).toMatchObject({ tornBytes: 0, startedAtMs: null, durationMs: 0, keyId: KEY_ID });
  });
});
