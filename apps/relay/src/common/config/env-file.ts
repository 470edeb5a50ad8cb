import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseEnv } from 'node:util';

export type EnvFileResult = { env: NodeJS.ProcessEnv; file: string; loaded: string[] } | { env: NodeJS.ProcessEnv; file: string; loaded: null };

/** Past this, the file is not an environment file: start-up refuses rather than parse megabytes. */
const MAX_ENV_FILE_BYTES = 256 * 1024;

/**
 * Spec 4.13: the relay loads the service's environment file (`$SVC_HOME/.env`) at start, so provider keys
 * kept there work without sourcing it. The process environment wins: a variable already set is never
 * overridden. Returns the merged environment and the names (never the values) it took from the file;
 * `loaded: null` when there is no file.
 */
export function withServiceEnvFile(env: NodeJS.ProcessEnv, svcHome: string): EnvFileResult {
  const file = path.join(svcHome, '.env');
  let text: string;
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return { env, file, loaded: null };
    if (st.size > MAX_ENV_FILE_BYTES) throw new Error(`${file} is ${st.size} bytes; an environment file is at most ${MAX_ENV_FILE_BYTES}`);
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { env, file, loaded: null };
    throw err;
  }
  const parsed = parseEnv(text);
  const merged: NodeJS.ProcessEnv = { ...env };
  const loaded: string[] = [];
  for (const [k, v] of Object.entries(parsed)) {
    if (merged[k] !== undefined || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) continue;
    merged[k] = v;
    loaded.push(k);
  }
  return { env: merged, file, loaded };
}
