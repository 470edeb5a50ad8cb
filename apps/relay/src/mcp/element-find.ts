import type { Element, ElementTree, Role } from './element-tree';

/*
 * Finding an element of a fresh read by ref or by query (issue 40, item 2). Pure. A ref names one element or
 * none (then it is stale: the agent reads the screen again); a query ({text, role, exact}) must name exactly
 * one element on screen to act on, so an ambiguous one is refused with the candidates' refs rather than
 * guessed at. Matching is plain string work (lower case, includes): no pattern from the peer is compiled.
 */

export type ElementQuery = { text?: string; role?: Role; exact?: boolean };

/** The elements the query names, in reading order: the label (text, description or the texts inside) holds the text. */
export function matching(tree: ElementTree, q: ElementQuery): Element[] {
  const needle = q.text?.trim().toLowerCase() ?? '';
  return tree.elements.filter((e) => {
    if (q.role && e.role !== q.role) return false;
    if (!needle) return true;
    const names = [e.label, e.text, e.description].filter((s): s is string => s !== null).map((s) => s.trim().toLowerCase());
    return q.exact ? names.includes(needle) : names.some((s) => s.includes(needle));
  });
}

export type Found = { ok: true; element: Element } | { ok: false; reason: 'none' | 'ambiguous' | 'off_screen'; candidates: Element[] };

/**
 * The one element a query acts on: among those on screen, the whole-label matches win over partial ones;
 * more than one left is ambiguous. Matches that are all off screen say so (scroll, then read again).
 */
export function findOne(tree: ElementTree, q: ElementQuery): Found {
  const all = matching(tree, q);
  const shown = all.filter((e) => e.on_screen);
  if (shown.length === 0) return { ok: false, reason: all.length > 0 ? 'off_screen' : 'none', candidates: all };
  const needle = q.text?.trim().toLowerCase();
  const whole = needle ? shown.filter((e) => [e.label, e.text, e.description].some((s) => s?.trim().toLowerCase() === needle)) : [];
  const pick = whole.length > 0 ? whole : shown;
  return pick.length === 1 ? { ok: true, element: pick[0] } : { ok: false, reason: 'ambiguous', candidates: pick };
}

export function byRef(tree: ElementTree, ref: string): Element | undefined {
  return tree.elements.find((e) => e.ref === ref);
}

/** How a query reads in a message: `text "Send", role button`. */
export function queryWords(q: ElementQuery): string {
  const parts: string[] = [];
  if (q.text !== undefined) parts.push(`${q.exact ? 'exactly ' : ''}text ${JSON.stringify(q.text.length > 80 ? q.text.slice(0, 80) + '…' : q.text)}`);
  if (q.role) parts.push(`role ${q.role}`);
  return parts.join(', ') || 'any element';
}
