import { encodeRecord, GENESIS_HASH } from '@svc/events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { Clock } from './clock';
import { CommandLoop } from './command-loop';
import { fileStore } from './file-store';
import { Secrets } from '../auth/secrets';

/** A clock that moves a second on every read, so a replay of a few MiB takes "long" without sleeping. */
class SteppingClock extends Clock {
  private t = Date.parse('2026-03-01T00:00:00.000Z');
  now(): Date {
    this.t += 1000;
    return new Date(this.t);
  }
}

describe('CommandLoop.open', () => {
  it('says where a long start-up replay is (percent and seq), a line every 2 s of its clock', async () => {
    const relayDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-open-'));
    const events = path.join(relayDir, 'events');
    fs.mkdirSync(events);
    let prev = GENESIS_HASH;
    const lines: string[] = [];
    for (let seq = 1; seq <= 6000; seq++) {
      const data = { tokenPrefix: `p${String(seq).padStart(7, '0')}`, ip: '10.0.0.1', via: 'http', pad: 'x'.repeat(400) };
      const r = encodeRecord({ seq, id: `i${seq}`, at: '2026-03-01T00:00:00.000Z', type: 'session.seen', actor: 'system', data, v: 1, prev });
      lines.push(r.line);
      prev = r.hash;
    }
    fs.writeFileSync(path.join(events, 'segment-000000000001.jsonl'), lines.join('\n') + '\n');
    const info = jest.fn();
    const logger = { info, warn: jest.fn(), error: jest.fn(), debug: jest.fn() } as unknown as Logger;
    const loop = await CommandLoop.open({
      store: fileStore(relayDir, 64 << 20),
      secrets: Secrets.load(relayDir),
      clock: new SteppingClock(),
      logger,
      snapshotEvery: 1_000_000,
      onFatal: (e) => {
        throw e;
      },
    });
    expect(loop.lastSeq).toBe(6000);
    const progress = info.mock.calls.filter(([, msg]) => msg === 'replaying the event log').map(([o]) => o as { percent: number; seq: number });
    expect(progress.length).toBeGreaterThanOrEqual(1);
    for (const p of progress) {
      expect(p.percent).toBeGreaterThan(0);
      expect(p.percent).toBeLessThanOrEqual(100);
      expect(p.seq).toBeGreaterThan(0);
    }
    await loop.close();
    fs.rmSync(relayDir, { recursive: true, force: true });
  });
});
