import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';

/**
 * What the witnesses said, kept beside the log (relay/transparency/witnesses.json), not in it: a
 * cosignature recorded as an event would grow the very tree it cosigns, so the newest checkpoint could
 * never carry one. Per witness: its newest cosigned tree head (and the signature line, to append), and its
 * newest refusal. Bounded: one entry per configured witness.
 */
export type Cosigned = { size: number; root: string; time: number; line: string; received_at: number };
export type Refusal = { size: number; root: string; reason: string; time: number; received_at: number };
export type WitnessRecord = { name: string; key_hash: string; cosigned: Cosigned | null; refusal: Refusal | null };

export class WitnessStore {
  private readonly file: string;
  private records = new Map<string, WitnessRecord>();

  constructor(svcHome: string) {
    this.file = path.join(svcHome, 'relay', 'transparency', 'witnesses.json');
    try {
      if (fs.existsSync(this.file) && fs.statSync(this.file).size < 1 << 20) {
        const list = JSON.parse(fs.readFileSync(this.file, 'utf8')) as WitnessRecord[];
        if (Array.isArray(list)) for (const r of list) if (typeof r?.name === 'string') this.records.set(`${r.name}+${r.key_hash}`, r);
      }
    } catch {
      // An unreadable file loses only what witnesses said last; they say it again on their next run.
      this.records = new Map();
    }
  }

  list(): WitnessRecord[] {
    return [...this.records.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  private entry(name: string, keyHash: string): WitnessRecord {
    const id = `${name}+${keyHash}`;
    let r = this.records.get(id);
    if (!r) {
      r = { name, key_hash: keyHash, cosigned: null, refusal: null };
      this.records.set(id, r);
    }
    return r;
  }

  cosigned(name: string, keyHash: string, c: Cosigned): void {
    const r = this.entry(name, keyHash);
    if (r.cosigned && r.cosigned.size > c.size) return;
    r.cosigned = c;
    this.save();
  }

  refused(name: string, keyHash: string, refusal: Refusal): void {
    this.entry(name, keyHash).refusal = refusal;
    this.save();
  }

  /** The cosignature lines of every witness whose newest cosigned tree is this one. */
  linesFor(size: number, root: string): string[] {
    return this.list()
      .filter((r) => r.cosigned?.size === size && r.cosigned.root === root)
      .map((r) => r.cosigned!.line);
  }

  private save(): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    atomicWrite(this.file, JSON.stringify(this.list(), null, 2) + '\n', { mode: 0o600 });
  }
}
