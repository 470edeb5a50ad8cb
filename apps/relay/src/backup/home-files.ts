import { LOCK_FILE } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * What of a home a backup holds beside the log and its snapshot: the relay's keys and secrets (secret.key,
 * which the tokens' digests need; operator.key; checkpoint-key.pem; personal-keys.json; forwarder.key), the
 * Secure Link identity (the pin phones trust), terminal recordings, and the settings it starts with. One
 * list, read by backup and by restore alike.
 */
export const HOME_DIRS = ['relay', 'relay-secure-link'] as const;
export const HOME_TOP_FILES = ['.env', 'config.yaml'] as const;

/**
 * Left out: the log and the snapshots (taken apart, up to one seq), owned media (deleted at every start:
 * the registry is ephemeral by the spec), and the locks of a running relay (a restored home is unlocked).
 */
const SKIPPED_DIRS = new Set(['relay/events', 'relay/snapshots', 'relay/media-owned']);

export function skippedName(name: string): boolean {
  return name === LOCK_FILE || name.endsWith('.tmp');
}

export type HomeFile = { rel: string; abs: string; size: number };

/** The files of `home` a backup takes (regular files only; a symbolic link is listed in `links`, not followed). */
export function homeFiles(home: string, opts: { skip?: ReadonlySet<string> } = {}): { files: HomeFile[]; links: string[] } {
  const files: HomeFile[] = [];
  const links: string[] = [];
  const visit = (rel: string): void => {
    const abs = path.join(home, rel);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(abs);
    } catch {
      return; // gone since it was listed: the backup is of the home as it is now
    }
    if (st.isSymbolicLink()) links.push(rel);
    else if (st.isFile()) {
      if (!skippedName(path.basename(rel)) && !opts.skip?.has(rel)) files.push({ rel, abs, size: st.size });
    } else if (st.isDirectory() && !SKIPPED_DIRS.has(rel)) {
      for (const name of fs.readdirSync(abs).sort()) visit(`${rel}/${name}`);
    }
  };
  for (const dir of HOME_DIRS) visit(dir);
  for (const file of HOME_TOP_FILES) visit(file);
  return { files, links };
}
