import { FileEventStore, listSegments } from '@svc/events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { walkFileLog, type WalkControl, type WalkProgress } from './chain-walk';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A real file log of `n` records over small segments, written by the store itself. */
async function writeLog(n: number): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-walk-'));
  dirs.push(dir);
  const store = new FileEventStore({ dir, segmentBytes: 2048, onDurable: () => undefined });
  await store.open({ fromSeq: 1, onEvent: () => undefined });
  for (let i = 1; i <= n; i++) {
    await store.append([{ type: 'session.seen', data: { tokenPrefix: 'abcd1234', n: i } }], '2026-03-01T12:00:00.000Z', 'system').durable;
  }
  await store.close();
  return dir;
}

function control(upTo: number, over: Partial<WalkControl> = {}): WalkControl & { seen: WalkProgress[] } {
  const seen: WalkProgress[] = [];
  return { upTo, chunkBytes: 300, pace: () => Promise.resolve(), stopped: () => false, onProgress: (p) => seen.push(p), seen, ...over };
}

describe('walkFileLog: the full check from seq 1, a piece at a time', () => {
  it('proves every record across segments, its progress only ever growing to the whole', async () => {
    const dir = await writeLog(40);
    expect(listSegments(dir).length).toBeGreaterThan(2);
    const ctl = control(40);
    expect(await walkFileLog(dir, ctl)).toEqual({ state: 'verified', records: 40, fromSeq: 1, cut: null });
    const records = ctl.seen.map((p) => p.records);
    expect(records).toEqual([...records].sort((a, b) => a - b));
    expect(ctl.seen.length).toBeGreaterThan(10); // 300-byte pieces
    const last = ctl.seen.at(-1)!;
    expect(last.records).toBe(40);
    expect(last.bytesDone).toBe(last.bytesTotal);
  });

  it('stops at the seq durable when it started: records written later are not its to prove', async () => {
    const dir = await writeLog(20);
    expect(await walkFileLog(dir, control(12))).toEqual({ state: 'verified', records: 12, fromSeq: 1, cut: null });
  });

  it('names a record missing from the end of the log', async () => {
    const dir = await writeLog(10);
    expect(await walkFileLog(dir, control(11))).toMatchObject({ state: 'broken', records: 10, seq: 11, reason: 'expected seq 11: it is missing' });
  });

  it("names a log whose first segment is gone without a recorded cut (ChainWalker's rule)", async () => {
    const dir = await writeLog(40);
    const [first, second] = listSegments(dir);
    fs.rmSync(path.join(dir, first.file));
    expect(await walkFileLog(dir, control(40))).toMatchObject({
      state: 'broken',
      seq: 1,
      segment: second.file,
      reason: expect.stringContaining('no recorded cut says they were pruned'),
    });
  });

  it('names a record cut short inside the log (not at its end)', async () => {
    const dir = await writeLog(40);
    const first = path.join(dir, listSegments(dir)[0].file);
    const text = fs.readFileSync(first, 'utf8');
    fs.writeFileSync(first, text.slice(0, text.length - 10));
    const out = await walkFileLog(dir, control(40));
    expect(out).toMatchObject({ state: 'broken', segment: listSegments(dir)[0].file });
  });

  it('stops at its next piece once told to, saying how far it got', async () => {
    const dir = await writeLog(40);
    let pieces = 0;
    const ctl = control(40, { stopped: () => ++pieces >= 3 });
    const out = await walkFileLog(dir, ctl);
    expect(out.state).toBe('cancelled');
    expect(out.records).toBeGreaterThan(0);
    expect(out.records).toBeLessThan(40);
  });
});
