import type { Snapshot } from './event-store';
import { MAX_FILE_JSON_DEPTH, parseJsonBounded } from './json-limits';

/**
 * How every snapshot adapter stores a snapshot: its JSON text and a MAC of that text under the install's
 * key, so a snapshot cannot be forged to change state without breaking it. Serialized now: the models
 * move on while it is stored.
 */
export function sealSnapshot<M>(snapshot: Snapshot<M>, macOf: (text: string) => string): { body: string; mac: string } {
  const body = JSON.stringify(snapshot);
  return { body, mac: macOf(body) };
}

/** A stored snapshot's body, if its MAC holds (parsed bounded again past the MAC: restoring walks the models, and the key may have leaked). */
export function openSnapshot<M>(body: unknown, mac: unknown, macOf: (text: string) => string): Snapshot<M> | null {
  if (typeof body !== 'string' || typeof mac !== 'string' || mac !== macOf(body)) return null;
  return parseJsonBounded(body, MAX_FILE_JSON_DEPTH) as Snapshot<M>;
}
