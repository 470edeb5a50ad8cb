import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Snapshot, SnapshotPort } from '../event-store';
import { MAX_FILE_JSON_DEPTH, parseJsonBounded } from '../json-limits';
import { openSnapshot, sealSnapshot, type SnapshotCipher } from '../snapshot-seal';

const SNAP_RE = /^snapshot-(\d{12})\.json$/;

/**
 * Projection snapshots, so start-up replays only what came after the latest one. Each file carries a
 * MAC under the install's key: a snapshot cannot be forged to change state without breaking it.
 */
export class SnapshotStore implements SnapshotPort {
  constructor(
    private readonly dir: string,
    private readonly mac: (text: string) => string,
    private readonly keep = 2,
    private readonly cipher?: SnapshotCipher,
  ) {}

  latest<M>(): Promise<Snapshot<M> | null> {
    return Promise.resolve(this.latestSync<M>());
  }

  write<M>(snapshot: Snapshot<M>): Promise<void> {
    try {
      this.writeSync(snapshot);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /** Removes every snapshot (after a forgetting: none may keep what it forgot). */
  clear(): Promise<void> {
    if (fs.existsSync(this.dir))
      for (const f of fs.readdirSync(this.dir)) if (SNAP_RE.test(f) || f.endsWith('.tmp')) fs.rmSync(path.join(this.dir, f), { force: true });
    return Promise.resolve();
  }

  latestSync<M>(): Snapshot<M> | null {
    if (!fs.existsSync(this.dir)) return null;
    const files = fs
      .readdirSync(this.dir)
      .filter((f) => SNAP_RE.test(f))
      .sort()
      .reverse();
    for (const file of files) {
      try {
        const text = fs.readFileSync(path.join(this.dir, file), 'utf8');
        const { body, mac } = parseJsonBounded(text, MAX_FILE_JSON_DEPTH) as { body: string; mac: string };
        const snapshot = openSnapshot<M>(body, mac, this.mac, this.cipher);
        if (snapshot) return snapshot;
      } catch {
        // an unreadable snapshot is skipped; the log is the truth and a full replay still works
      }
    }
    return null;
  }

  writeSync<M>(snapshot: Snapshot<M>): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const sealed = sealSnapshot(snapshot, this.mac, this.cipher);
    const file = path.join(this.dir, `snapshot-${String(snapshot.seq).padStart(12, '0')}.json`);
    const tmp = `${file}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeSync(fd, JSON.stringify(sealed));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
    const old = fs
      .readdirSync(this.dir)
      .filter((f) => SNAP_RE.test(f))
      .sort()
      .reverse()
      .slice(this.keep);
    for (const f of old) fs.rmSync(path.join(this.dir, f), { force: true });
  }
}
