import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';
import { isLoopbackHost } from '../common/config/hosts';
import { ID_RE, newId } from './protocol';

export class ReachConfigError extends Error {}

/** The broker's base URL (`wss://host[:port]`, a trailing `/` or `/v1/connect` taken off) and its connect URL. */
export function brokerUrls(raw: string): { base: string; connect: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ReachConfigError(`RELAY_SECURE_LINK_BROKER_URL "${raw.slice(0, 80)}" is not a URL`);
  }
  if (u.protocol !== 'wss:' && !(u.protocol === 'ws:' && isLoopbackHost(u.hostname)))
    throw new ReachConfigError('RELAY_SECURE_LINK_BROKER_URL must be wss:// (ws:// only on loopback)');
  if (u.username || u.password || u.search || u.hash)
    throw new ReachConfigError('RELAY_SECURE_LINK_BROKER_URL carries no credentials, query or fragment');
  let pathname = u.pathname;
  while (pathname.endsWith('/')) pathname = pathname.slice(0, -1);
  if (pathname.endsWith('/v1/connect')) pathname = pathname.slice(0, -'/v1/connect'.length);
  const base = `${u.protocol}//${u.host}${pathname}`;
  return { base, connect: `${base}/v1/connect` };
}

/** The host id: one line, 22 base64url characters, made once (0600 in a 0700 directory). */
export function loadOrCreateHostId(file: string): string {
  if (fs.existsSync(file)) {
    const id = fs.readFileSync(file, 'utf8').trim();
    if (!ID_RE.test(id)) throw new ReachConfigError(`the Reach host id file ${file} is malformed (22 base64url characters expected)`);
    return id;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const id = newId();
  atomicWrite(file, `${id}\n`);
  return id;
}
