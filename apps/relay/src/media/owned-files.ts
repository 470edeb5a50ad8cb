import { isWithin, retireOwnedFile } from '@svc/domain';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from 'pino';
import type { CommandLoop } from '../common/loop/command-loop';

/**
 * The relay's own media directory (0700): files it wrote (uploads, owned registrations) live here while
 * a token holds them. Each is deleted when its last token retires, at orderly shutdown, and at start for
 * files an earlier run left behind; every deletion is recorded (`media.retired`).
 */
export class OwnedFiles {
  /** The directory's real path. */
  readonly dir: string;

  constructor(
    dir: string,
    private readonly loop: CommandLoop,
    private readonly logger: Logger,
  ) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dir, 0o700);
    this.dir = fs.realpathSync(dir);
  }

  /** Start: every file no token holds (and not still being written) belongs to an earlier run. */
  async sweepLeftovers(writing: (p: string) => boolean): Promise<void> {
    let names: string[] = [];
    try {
      names = await fs.promises.readdir(this.dir);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'media: owned directory not readable');
    }
    for (const name of names) {
      const p = path.join(this.dir, name);
      if (this.loop.models.media.holders(p) > 0 || writing(p)) continue;
      await this.deleteAndRecord(p, 'restart');
    }
  }

  /** A token ended: the file goes once no other token holds it. */
  async release(p: string): Promise<void> {
    if (this.loop.models.media.holders(p) > 0) return;
    if (!isWithin(p, this.dir)) return;
    await this.deleteAndRecord(p, 'released');
  }

  /** Orderly shutdown: every owned file the registry holds. */
  async deleteAll(): Promise<void> {
    for (const p of this.loop.models.media.ownedPaths()) await this.deleteAndRecord(p, 'shutdown');
  }

  private async deleteAndRecord(p: string, reason: 'released' | 'shutdown' | 'restart'): Promise<void> {
    let result: { deleted: boolean; error?: string };
    try {
      await fs.promises.rm(p, { recursive: true, force: false });
      result = { deleted: true };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      result = code === 'ENOENT' ? { deleted: false, error: 'already gone' } : { deleted: false, error: code };
      if (code !== 'ENOENT') this.logger.warn({ reason, code }, 'media: owned file not deleted');
    }
    await this.loop
      .run('system', () => retireOwnedFile(p, reason, result))
      .catch((err: Error) => {
        this.logger.warn({ err: err.message }, 'media: retirement not recorded');
      });
  }
}
