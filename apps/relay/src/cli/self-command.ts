import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * How the operator runs this CLI again, for the hints it prints: `svc` when that name on PATH is this
 * very CLI (`npm link`, a global install), else the path it was started by, relative to the working
 * directory when inside it (`./bin/svc` in a fresh clone, where `npm install` puts nothing on PATH).
 */
export function selfCommand(env: NodeJS.ProcessEnv, script: string | undefined = process.argv[1], cwd: string = process.cwd()): string {
  if (!script) return 'svc';
  const self = realpath(script);
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir && realpath(path.join(dir, 'svc')) === self) return 'svc';
  }
  // Started through something else (a test, `node dist/...`): the name the docs use.
  if (path.basename(script) !== 'svc') return 'svc';
  const rel = path.relative(cwd, script);
  return rel.startsWith('..') || path.isAbsolute(rel) ? script : `.${path.sep}${rel}`;
}

function realpath(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}
