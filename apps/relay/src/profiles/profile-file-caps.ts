import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ProfileFilesConfig } from '../common/config/relay-config';
import { listFiles } from './profile-layout';

/** Memory files one listing shows at most (the rest are not shown, and so count as shown in part). */
export const MAX_MEMORY_ENTRIES = 500;
const MEMORY_EXT = /\.(md|txt)$/i;

/*
 * The one rule of what a phone is shown of a profile file, for both the reads and the write guard (issue
 * 35): the app lets its user edit what it was served and saves the draft without If-Match, so whatever the
 * relay shows only in part, a blind save would cut. SOUL.md is shown whole up to its cap. Memory files are
 * listed by name, each whole up to its cap while the listing's budget lasts: a file past its cap, or past
 * what is left of the budget, is cut there (once it is spent, to nothing), and files past the 500th are not
 * listed at all.
 * The reads and the guard (ProfilesService) both ask this module, so they cannot disagree.
 */

/** One listed memory file: its size, and `max`, the bytes of it the listing shows (it is cut when `size > max`). */
export type Listed = { filename: string; size: number; max: number };

/** The memory listing of `dir` in order: each `.md`/`.txt` regular file, its size and what of it is shown. */
export function memoryListing(dir: string, caps: ProfileFilesConfig): Listed[] {
  let left = caps.memoryListMaxBytes;
  return listFiles(dir)
    .filter((f) => MEMORY_EXT.test(f))
    .sort()
    .slice(0, MAX_MEMORY_ENTRIES)
    .map((filename) => {
      const size = sizeOf(path.join(dir, filename));
      const max = Math.min(caps.memoryMaxBytes, left);
      left -= Math.min(size, max);
      return { filename, size, max };
    });
}

/** The bytes of a profile file (`['SOUL.md']` or `['memories', name]`) the phone routes show: more is cut. */
export function shownBytes(home: string, segments: string[], caps: ProfileFilesConfig): number {
  if (segments.length === 1) return caps.soulMaxBytes;
  const name = segments[segments.length - 1];
  return memoryListing(path.join(home, ...segments.slice(0, -1)), caps).find((e) => e.filename === name)?.max ?? 0;
}

function sizeOf(file: string): number {
  try {
    return fs.lstatSync(file).size;
  } catch {
    return 0;
  }
}
