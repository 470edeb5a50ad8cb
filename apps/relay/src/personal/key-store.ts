import { isPersonalKeyId, MAX_FILE_JSON_DEPTH, newPersonalKeyId, parseJsonBounded, parsePersonalKeyId } from '@svc/events';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';

/**
 * Where the data keys of personal content live: outside the log (a file under the home, or a table
 * beside a PostgreSQL log). Destroying a key is forgetting what it sealed.
 */
export interface PersonalKeyStore {
  /** Which store (said on the console and by the CLI). */
  readonly where: string;
  get(id: string): Buffer | undefined;
  /**
   * The key of a slot (`<device>:<hour>`), made when it has none (or, with `fresh`, made anew: it is the
   * slot's key from then on). A new key is stored before this returns (the file store), or `persisted`
   * resolves once it is (a database): what it seals must not be acknowledged before.
   */
  current(slot: string, fresh?: boolean): { id: string; key: Buffer; persisted: Promise<void> | null };
  /** How many keys the slot holds. */
  count(slot: string): number;
  ids(): string[];
  destroy(ids: readonly string[]): Promise<number>;
  close(): Promise<void>;
  /**
   * Reads keys again (a standby, before it applies records the leader sealed: new keys were made, and
   * forgotten ones destroyed, by another process): with `need`, only those of its ids not held yet; without,
   * every row. The file store is never shared, so it has none.
   */
  sync?(need?: readonly string[]): Promise<void>;
}

/**
 * The file holds one JSON object, ~90 bytes a key: a phone sending content every hour of a year adds 0.8 MB
 * (retention keeps it bounded). Past this a file is refused as not ours rather than parsed.
 */
const MAX_KEY_FILE_BYTES = 64 * 1024 * 1024;

export class KeyFileError extends Error {}

/** `<relay dir>/personal-keys.json` (0600): `{"v":1,"keys":{"<id>":"<base64 32 bytes>"}}`, replaced atomically on each change. */
export class FileKeyStore implements PersonalKeyStore {
  private readonly keys = new KeyMap();

  private constructor(readonly file: string) {}

  get where(): string {
    return this.file;
  }

  static open(relayDir: string): FileKeyStore {
    const store = new FileKeyStore(path.join(relayDir, 'personal-keys.json'));
    store.load();
    return store;
  }

  get(id: string): Buffer | undefined {
    return this.keys.get(id);
  }

  current(slot: string, fresh = false): { id: string; key: Buffer; persisted: null } {
    const have = fresh ? null : this.keys.inSlot(slot);
    if (have) return { ...have, persisted: null };
    const made = this.keys.make(slot);
    try {
      this.write();
    } catch (err) {
      this.keys.delete(made.id);
      throw err;
    }
    return { ...made, persisted: null };
  }

  count(slot: string): number {
    return this.keys.count(slot);
  }

  ids(): string[] {
    return this.keys.ids();
  }

  destroy(ids: readonly string[]): Promise<number> {
    let n = 0;
    for (const id of ids) if (this.keys.delete(id)) n++;
    if (n > 0) this.write();
    return Promise.resolve(n);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private load(): void {
    for (const [id, key] of readKeyFile(this.file) ?? []) this.keys.set(id, key);
  }

  private write(): void {
    const keys: Record<string, string> = {};
    for (const [id, key] of this.keys.entries()) keys[id] = key.toString('base64');
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    atomicWrite(this.file, JSON.stringify({ v: 1, keys }) + '\n', { mode: 0o600 });
  }
}

/**
 * A personal-keys.json (the file store's, or a backup's), bounded and checked entry by entry: null when
 * the file is not there, a KeyFileError saying what is wrong otherwise (never a partial read).
 */
export function readKeyFile(file: string): Array<[string, Buffer]> | null {
  let text: string;
  try {
    const st = fs.statSync(file);
    if (st.size > MAX_KEY_FILE_BYTES) throw new KeyFileError(`${file} is ${st.size} bytes, more than a key file can be`);
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = parseJsonBounded(text, MAX_FILE_JSON_DEPTH);
  } catch {
    parsed = null;
  }
  const keys = (parsed as { v?: unknown; keys?: unknown } | null)?.keys;
  if ((parsed as { v?: unknown } | null)?.v !== 1 || typeof keys !== 'object' || keys === null || Array.isArray(keys)) {
    // Never started over silently: a new empty file would forget everything the old one could open.
    throw new KeyFileError(`${file} is not a personal data key file; restore it from a backup or move it away (its content is then forgotten)`);
  }
  const out: Array<[string, Buffer]> = [];
  for (const [id, value] of Object.entries(keys)) {
    const key = typeof value === 'string' ? Buffer.from(value, 'base64') : null;
    if (!isPersonalKeyId(id) || !key || key.length !== 32) throw new KeyFileError(`${file}: a bad entry (${id.slice(0, 80)})`);
    out.push([id, key]);
  }
  return out;
}

/** Keys by id, the current key of each slot, and how many keys each slot holds. */
export class KeyMap {
  private readonly byId = new Map<string, Buffer>();
  private readonly bySlot = new Map<string, string>();
  private readonly perSlot = new Map<string, number>();

  get(id: string): Buffer | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  set(id: string, key: Buffer): void {
    const parsed = parsePersonalKeyId(id);
    if (!parsed) throw new Error(`not a data key id: ${id.slice(0, 80)}`);
    if (!this.byId.has(id)) this.perSlot.set(parsed.slot, (this.perSlot.get(parsed.slot) ?? 0) + 1);
    this.byId.set(id, key);
    this.bySlot.set(parsed.slot, id);
  }

  count(slot: string): number {
    return this.perSlot.get(slot) ?? 0;
  }

  inSlot(slot: string): { id: string; key: Buffer } | null {
    const id = this.bySlot.get(slot);
    const key = id === undefined ? undefined : this.byId.get(id);
    return id !== undefined && key ? { id, key } : null;
  }

  make(slot: string): { id: string; key: Buffer } {
    const id = newPersonalKeyId(slot);
    const key = randomBytes(32);
    this.set(id, key);
    return { id, key };
  }

  delete(id: string): boolean {
    const parsed = parsePersonalKeyId(id);
    if (!parsed || !this.byId.delete(id)) return false;
    if (this.bySlot.get(parsed.slot) === id) this.bySlot.delete(parsed.slot);
    const left = (this.perSlot.get(parsed.slot) ?? 1) - 1;
    if (left > 0) this.perSlot.set(parsed.slot, left);
    else this.perSlot.delete(parsed.slot);
    return true;
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  entries(): IterableIterator<[string, Buffer]> {
    return this.byId.entries();
  }
}
