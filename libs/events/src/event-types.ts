import type { RelayEvent } from './relay-event';
import { EVENT_VERSIONS } from './event-schema';
import { matchesType } from './event-types-match';

/**
 * Every event type of the relay's union, at run time (the union itself is types only): what
 * `svc relay events tail --type` checks a name against. Read off the schema version registry, whose
 * keys the compiler holds to the union both ways (a type without a version does not compile).
 */
export const EVENT_TYPES: readonly RelayEvent['type'][] = (Object.keys(EVENT_VERSIONS) as RelayEvent['type'][]).sort();

/** The families (`session`, `pairing`...): what `--type session` names. */
export const EVENT_FAMILIES: readonly string[] = [...new Set(EVENT_TYPES.map((t) => t.slice(0, t.indexOf('.'))))];

/** A `--type` spec (one, already parsed: `session.`, `session.revoked`) names at least one event type. */
export function namesAnEventType(spec: string): boolean {
  return EVENT_TYPES.some((t) => matchesType(t, [spec]));
}

/** Edit distance with a cut-off: rows of at most 40 cells, stops once every cell passes `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, row[j]);
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length];
}

/**
 * The known families and types closest to a name that matched none, best first (at most `limit`): a
 * family or type it begins or ends (`revoked` -> `session.revoked`), or one a few typing slips away
 * (`sesion` -> `session`). Plain string work, no regular expression built from the input.
 */
export function closeEventTypes(spec: string, limit = 5): string[] {
  const s = spec.trim().toLowerCase().replace(/\.$/, '');
  if (s === '' || s.length > 64) return [];
  const max = Math.max(1, Math.floor(s.length / 3));
  const scored: Array<{ name: string; score: number }> = [];
  for (const name of [...EVENT_FAMILIES, ...EVENT_TYPES]) {
    const action = name.slice(name.indexOf('.') + 1);
    let score: number;
    if (name.startsWith(s) || (name.includes('.') && action.startsWith(s))) score = 0;
    else score = Math.min(distance(s, name, max), name.includes('.') ? distance(s, action, max) : max + 1);
    if (score <= max) scored.push({ name, score });
  }
  return scored
    .toSorted((x, y) => x.score - y.score || x.name.length - y.name.length || x.name.localeCompare(y.name))
    .slice(0, limit)
    .map((x) => x.name);
}
