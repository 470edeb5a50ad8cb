import * as fs from 'node:fs';
import * as path from 'node:path';
import { MAX_FILE_JSON_DEPTH, parseJsonBounded } from './json-limits';

export type Snapshot<M = unknown> = { seq: number; hash: string; at: string; models: M };

const SNAP_RE = /^snapshot-(\d{12})\.json$/;

/**
 * Projection snapshots, so start-up replays only what came after the latest one. Each file carries a
 * MAC under the install's key: a snapshot cannot be forged to change state without breaking it.
 */
export class SnapshotStore {
  constructor(
    private readonly dir: string,
    private readonly mac: (text: string) => string,
    private readonly keep = 2,
  ) {}

  latest<M>(): Snapshot<M> | null {
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
        // Checked again past the MAC: restoring walks the models, and the key may have leaked.
        if (typeof body === 'string' && mac === this.mac(body)) return parseJsonBounded(body, MAX_FILE_JSON_DEPTH) as Snapshot<M>;
      } catch {
        // an unreadable snapshot is skipped; the log is the truth and a full replay still works
      }
    }
    return null;
  }

  write<M>(snapshot: Snapshot<M>): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const body = JSON.stringify(snapshot);
    const file = path.join(this.dir, `snapshot-${String(snapshot.seq).padStart(12, '0')}.json`);
    const tmp = `${file}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeSync(fd, JSON.stringify({ body, mac: this.mac(body) }));
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
