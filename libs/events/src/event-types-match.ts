/**
 * Which event types a list of specs names: the one rule of the console's log filter (relay and browser),
 * the console's live refetches, `svc relay events tail --type` and that command's SQL.
 *
 * - `session`, `session.` and `session.*` name every `session.*` type (`session` also the bare type
 *   `session`, which no event has);
 * - `*` names every type;
 * - anything else names one type exactly (`session.rev` is not a prefix of `session.revoked`).
 *
 * A spec may be a comma list. Pure, no imports: the console's browser build takes this module as it is.
 */

/** Parsed specs: each a family (`x.`) or a type that also names its family (`x`); `undefined`: every type. */
export type TypeSpecs = readonly string[];

export function parseTypeSpecs(specs: string | readonly string[] | undefined): TypeSpecs | undefined {
  if (specs === undefined) return undefined;
  const out: string[] = [];
  for (const list of typeof specs === 'string' ? [specs] : specs) {
    for (const raw of list.split(',')) {
      const s = raw.trim();
      if (s === '') continue;
      if (s === '*') return undefined;
      out.push(s.endsWith('*') ? s.slice(0, -1) : s);
    }
  }
  return out.length > 0 ? out : undefined;
}

export function matchesType(type: string, specs: TypeSpecs | undefined): boolean {
  if (specs === undefined) return true;
  for (const s of specs) {
    if (s.endsWith('.') ? type.startsWith(s) : type === s || (type.startsWith(s) && type.charCodeAt(s.length) === 46)) return true;
  }
  return false;
}

/** The predicate of `specs` (parsed once). */
export function typeMatcher(specs: string | readonly string[] | undefined): (type: string) => boolean {
  const parsed = parseTypeSpecs(specs);
  return parsed === undefined ? () => true : (type) => matchesType(type, parsed);
}

/**
 * The same rule for SQL: `type = ANY(exact) OR type LIKE ANY(like)`, the LIKE patterns escaped for
 * PostgreSQL's default escape character (`\`). `null`: every type (no condition).
 */
export function typeSpecsSql(specs: TypeSpecs | undefined): { exact: string[]; like: string[] } | null {
  if (specs === undefined) return null;
  return {
    exact: [...specs],
    like: specs.map((s) => (s.endsWith('.') ? s : `${s}.`).replace(/[\\%_]/g, (c) => `\\${c}`) + '%'),
  };
}
