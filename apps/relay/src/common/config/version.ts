import * as fs from 'node:fs';
import * as path from 'node:path';

/** The relay's version, from the nearest package.json (the same in source and in dist). */
export function relayVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
    if (path.dirname(dir) === dir) return '0.0.0';
  }
}
