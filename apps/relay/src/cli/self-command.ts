import * as fs from 'node:fs';
import * as os from 'node:os';
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

/** A word as a POSIX shell reads it back unchanged: bare when it is plainly safe, else single-quoted. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** This checkout's (or installed package's) bin/svc, found from this module's place (dist/ or the sources). */
function ownBin(): string | null {
  for (let dir = __dirname, i = 0; i < 8; i++, dir = path.dirname(dir)) {
    const bin = path.join(dir, 'bin', 'svc');
    if (fs.existsSync(bin) && fs.existsSync(path.join(dir, 'package.json'))) return bin;
  }
  return null;
}

/**
 * A command that runs this svc as written, from any directory of this machine, for the console's copy
 * buttons (the console answers only on loopback, so the reader is on this machine): `svc` when PATH
 * finds this very CLI (npm link, a global install), else bin/svc's absolute path; and `SVC_HOME=...`
 * before it when the relay's home is not the default, so the command finds this relay's log and key.
 */
export function runnableSvc(env: NodeJS.ProcessEnv, home: string): string {
  const bin = ownBin();
  const onPath = bin !== null && (env.PATH ?? '').split(path.delimiter).some((dir) => dir && realpath(path.join(dir, 'svc')) === realpath(bin));
  const cmd = bin === null || onPath ? 'svc' : shellQuote(bin);
  return path.resolve(home) === path.join(os.homedir(), '.svc') ? cmd : `SVC_HOME=${shellQuote(path.resolve(home))} ${cmd}`;
}
