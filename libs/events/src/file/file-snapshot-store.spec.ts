import { createHmac } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SnapshotStore } from './file-snapshot-store';

const mac = (text: string): string => createHmac('sha256', 'test-key').update(text).digest('hex');

describe('SnapshotStore', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-snap-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('restores the latest snapshot that carries a good MAC', () => {
    const store = new SnapshotStore(dir, mac);
    store.writeSync({ seq: 5, hash: 'h5', at: 'now', models: { a: [1, { b: 2 }] } });
    expect(store.latestSync()).toEqual({ seq: 5, hash: 'h5', at: 'now', models: { a: [1, { b: 2 }] } });
  });

  it('skips a snapshot nested past the file limit even with a good MAC (a full replay follows instead)', () => {
    const store = new SnapshotStore(dir, mac);
    store.writeSync({ seq: 5, hash: 'h5', at: 'now', models: { ok: true } });
    let deep: unknown = 1;
    for (let i = 0; i < 300; i++) deep = { d: deep };
    store.writeSync({ seq: 9, hash: 'h9', at: 'now', models: deep });
    expect(store.latestSync<{ ok: boolean }>()).toMatchObject({ seq: 5, models: { ok: true } });
  });
});
