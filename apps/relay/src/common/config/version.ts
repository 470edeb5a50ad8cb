import * as fs from 'node:fs';
import * as path from 'node:path';

/** The directory of the nearest package.json above this file: the checkout, or the installed package. */
export function packageRoot(): string | null {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return null;
  }
}

/** The relay's version, from the nearest package.json (the same in source and in dist). */
export function relayVersion(): string {
  const root = packageRoot();
  if (!root) return '0.0.0';
  return (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
}
