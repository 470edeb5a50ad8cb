import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import {
  epoch,
  actorOf,
  CLIPBOARD_MAX_BYTES,
  consumeEntry,
  discardEntries,
  discardStale,
  DomainError,
  inboxFileName,
  magicMatches,
  stageImage,
  type ClipboardEntry,
  type Principal,
} from '@svc/domain';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/loop/clock';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { Scheduler } from '../common/loop/scheduler';
import { secureRandomBytes } from '../common/auth/secrets';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import type { StageImageDto } from './clipboard.dto';

/** base64 of 25 MB plus room for the JSON around it: the route's own body limit. */
export const CLIPBOARD_BODY_LIMIT = Math.ceil((CLIPBOARD_MAX_BYTES * 4) / 3) + 64 * 1024;
/** Files the relay wrote: a 16-hex entry id, then `-hint` or the extension. */
const OWN_FILE = /^([0-9a-f]{16})[-.]/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * The paste inbox `<svc_home>/inbox/`: phones stage an image, host tools read it once. Files are 0600
 * in a 0700 directory, created with O_EXCL|O_NOFOLLOW under a name the relay makes.
 */
@Injectable()
export class ClipboardService implements OnModuleInit, OnModuleDestroy {
  readonly dir: string;
  private sub: Subscription | null = null;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.dir = path.join(config.svcHome, 'inbox');
    scheduler.register('clipboard.stale', (m, now) => discardStale(m, now));
    // A host tool may take the file straight from the directory: that is a read too.
    scheduler.onTick(async () => {
      const missing = this.loop.models.clipboardInbox.all().filter((x) => !fs.existsSync(this.pathOf(x)));
      if (missing.length)
        await this.loop.run('system', (m) =>
          discardEntries(
            m,
            missing.map((x) => x.entryId),
            'missing',
          ),
        );
    });
  }

  onModuleInit(): void {
    this.sub = this.loop.bus.ofType('clipboard.staged', 'clipboard.consumed', 'clipboard.discarded').subscribe((e) => {
      const gone = e.type === 'clipboard.staged' ? e.data.supersedes : [e.data.entryId];
      for (const id of gone) this.removeFiles(id);
    });
    // Files no entry owns (a crash between write and event, or an unlink that never ran).
    const known = new Set(this.loop.models.clipboardInbox.all().map((x) => x.entryId));
    for (const name of this.listOwn()) {
      const id = OWN_FILE.exec(name)![1];
      if (!known.has(id)) this.unlink(name);
    }
  }

  onModuleDestroy(): void {
    this.sub?.unsubscribe();
  }

  async stage(input: StageImageDto, caller: Principal & { kind: 'device' }) {
    const format = input.format;
    const bytes = decodeBase64(input.bytes_base64);
    if (!magicMatches(format, bytes)) {
      throw new DomainError('clipboard.magic_mismatch', 'invalid', `the bytes are not a ${format} image (their signature does not match the format)`);
    }
    const dir = this.ensureDir();
    const entryId = secureRandomBytes(8).toString('hex');
    const fileName = inboxFileName(entryId, format, input.filename_hint);
    const full = path.join(dir, fileName);
    // inboxFileName cannot produce a separator; this guards the guarantee itself.
    if (path.dirname(full) !== dir || path.basename(full) !== fileName) throw new Error('clipboard file name escaped the inbox');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    writeExclusive(full, bytes);
    try {
      await this.loop.run(actorOf(caller), (m, now) =>
        stageImage(m, { entryId, fileName, format, sizeBytes: bytes.length, sha256, tokenPrefix: caller.tokenPrefix }, now),
      );
    } catch (err) {
      this.unlink(fileName);
      throw err;
    }
    const entry = this.loop.models.clipboardInbox.get(entryId)!;
    return { ok: true as const, path: full, size_bytes: bytes.length, id: entryId, format, sha256, stale_at: epoch(entry.staleAt) };
  }

  list() {
    const now = this.clock.now().getTime();
    return {
      ok: true as const,
      dir: this.dir,
      entries: this.loop.models.clipboardInbox
        .all()
        .filter((x) => x.staleAt > now)
        .reverse()
        .map((x) => this.view(x)),
    };
  }

  /** The one-shot read: the newest fresh image's bytes; the file is deleted once the read is recorded. */
  async takeLatest(by: string): Promise<{ entry: ClipboardEntry; bytes: Buffer }> {
    for (;;) {
      const entry = this.loop.models.clipboardInbox.latestFresh(this.clock.now());
      if (!entry) throw new DomainError('clipboard.empty_inbox', 'not_found', 'no fresh image in the paste inbox (images go stale after 5 minutes)');
      const bytes = this.readOwn(entry);
      if (!bytes) {
        await this.loop.run('system', (m) => discardEntries(m, [entry.entryId], 'missing'));
        continue;
      }
      await this.loop.run(by, (m, now) => consumeEntry(m, entry.entryId, by, now));
      return { entry, bytes };
    }
  }

  async clear(by: string) {
    const ids = this.loop.models.clipboardInbox.all().map((x) => x.entryId);
    const stored = await this.loop.run(by, (m) => discardEntries(m, ids, 'cleared'));
    return { ok: true as const, cleared: stored.length };
  }

  view(x: ClipboardEntry) {
    return {
      id: x.entryId,
      path: this.pathOf(x),
      file_name: x.fileName,
      format: x.format,
      size_bytes: x.sizeBytes,
      sha256: x.sha256,
      token_prefix: x.tokenPrefix,
      staged_at: epoch(x.stagedAt),
      stale_at: epoch(x.staleAt),
    };
  }

  private pathOf(x: ClipboardEntry): string {
    return path.join(this.dir, x.fileName);
  }

  private ensureDir(): string {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const st = fs.lstatSync(this.dir);
    if (!st.isDirectory() || st.isSymbolicLink()) {
      throw new DomainError(
        'clipboard.inbox_unavailable',
        'unavailable',
        'the paste inbox is not a plain directory; ask the operator to check <svc_home>/inbox',
      );
    }
    if ((st.mode & 0o077) !== 0) fs.chmodSync(this.dir, 0o700);
    return this.dir;
  }

  /** Reads a staged file without following links; null when it is gone or not a regular file. */
  private readOwn(entry: ClipboardEntry): Buffer | null {
    let fd: number;
    try {
      fd = fs.openSync(this.pathOf(entry), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    } catch {
      return null;
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile() || st.size !== entry.sizeBytes) return null;
      return fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  private listOwn(): string[] {
    try {
      return fs.readdirSync(this.dir).filter((n) => OWN_FILE.test(n));
    } catch {
      return [];
    }
  }

  private removeFiles(entryId: string): void {
    for (const name of this.listOwn()) if (name.startsWith(entryId)) this.unlink(name);
  }

  private unlink(name: string): void {
    try {
      fs.unlinkSync(path.join(this.dir, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.logger.warn({ file: name, err: (err as Error).message }, 'clipboard file not removed');
    }
  }
}

/** Strict base64 (standard or URL-safe, optional `data:` prefix); the size is checked before decoding. */
function decodeBase64(input: string): Buffer {
  let s = input.startsWith('data:') ? input.slice(input.indexOf(',') + 1) : input;
  s = s.replace(/\s+/g, '');
  if (s.length === 0) throw new DomainError('clipboard.empty', 'invalid', 'bytes_base64 is empty');
  const padding = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  const decodedLength = Math.floor((s.length * 3) / 4) - padding;
  if (decodedLength > CLIPBOARD_MAX_BYTES) {
    throw new DomainError('clipboard.too_large', 'too_large', `the image is larger than ${CLIPBOARD_MAX_BYTES} bytes (25 MB)`, {
      max_bytes: CLIPBOARD_MAX_BYTES,
    });
  }
  const url = !BASE64.test(s) && BASE64URL.test(s);
  if ((!BASE64.test(s) && !url) || (!url && s.length % 4 !== 0) || s.length % 4 === 1) {
    throw new DomainError('clipboard.bad_base64', 'invalid', 'bytes_base64 is not valid base64');
  }
  const bytes = Buffer.from(s, url ? 'base64url' : 'base64');
  if (bytes.length === 0) throw new DomainError('clipboard.empty', 'invalid', 'the image is empty');
  return bytes;
}

function writeExclusive(file: string, bytes: Buffer): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
  try {
    fs.writeSync(fd, bytes);
    fs.fsyncSync(fd);
    fs.fchmodSync(fd, 0o600);
  } catch (err) {
    fs.closeSync(fd);
    fs.unlinkSync(file);
    throw err;
  }
  fs.closeSync(fd);
}
