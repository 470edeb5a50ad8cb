import * as fs from 'node:fs';
import * as path from 'node:path';

/** Every test relay's operator key by its origin (in-process relays and spawned ones), for hand-made requests. */
const KEYS = new Map<string, string>();

/** Notes the key of the relay at `url`, read from its home (`<home>/relay/operator.key`). */
export function rememberOperatorKey(url: string, home: string): string {
  const key = fs.readFileSync(path.join(home, 'relay', 'operator.key'), 'utf8').trim();
  KEYS.set(new URL(url).origin, key);
  return key;
}

/** The operator key header of the test relay at `url` (none for a URL of no test relay): what the operator's tools send. */
export function operatorHeaderFor(url: string): Record<string, string> {
  const key = KEYS.get(new URL(url).origin);
  return key ? { 'x-operator-key': key } : {};
}
