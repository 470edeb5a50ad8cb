/**
 * Text made fit to be read aloud. Every step here is linear in the length of its input: the text comes
 * from peers (a phone's `response.create`, the agent API's answer), and one quadratic pattern over a
 * 150,000-character body once held the event loop for 30 s. The regular expressions left are ones
 * eslint-plugin-regexp proves free of super-linear backtracking; the markdown image and link steps,
 * which no backtracking engine can run in linear time, are scanners.
 */

/**
 * What should not be read aloud: code fences, markdown images, link targets (the label is kept), MEDIA
 * markers, URLs, markdown marks; whitespace collapsed. Links and images go before URLs, so the URL in
 * `[docs](https://x.example)` cannot swallow the closing parenthesis and leave the markup behind.
 */
export function sanitizeForSpeech(raw: string): string {
  let s = replaceSpans(raw, codeFenceAt, ' ');
  s = replaceSpans(s, markdownImageAt, ' ');
  s = replaceSpans(s, markdownLinkAt, null);
  return s
    .replace(/MEDIA:\S+/g, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/[*_`#>|~]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * At most `max` characters of `text`: when longer, cut after the last sentence end (`.`, `!`, `?`, a line
 * break) in the second half of the allowance, else at the last space there, else hard, and ` …` (within
 * `max`) marks the cut.
 */
export function truncateForSpeech(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  const room = Math.max(1, max - 2);
  const floor = Math.floor(room / 2);
  let space = -1;
  for (let i = room - 1; i >= floor; i--) {
    const c = text.charCodeAt(i);
    // '.', '!', '?', '\n'
    if (c === 0x2e || c === 0x21 || c === 0x3f || c === 0x0a) return { text: text.slice(0, i + 1).trimEnd() + ' …', truncated: true };
    if (space < 0 && (c === 0x20 || c === 0x09)) space = i;
  }
  return { text: text.slice(0, space > 0 ? space : room).trimEnd() + ' …', truncated: true };
}

/** A span found at a position: it ends before `end`, and is replaced by `with` (null: by its label). */
type Span = { end: number; label?: [number, number] };
type SpanAt = (s: string, i: number, find: Finders) => Span | null;

/**
 * One left-to-right pass (a global replace): where `at` finds a span, it is replaced by `replacement` (or,
 * when null, by the span's label), and the scan goes on after it.
 */
function replaceSpans(s: string, at: SpanAt, replacement: string | null): string {
  const find = new Finders(s);
  const out: string[] = [];
  let copied = 0;
  for (let i = 0; i < s.length;) {
    const span = at(s, i, find);
    if (!span) {
      i++;
      continue;
    }
    out.push(s.slice(copied, i), replacement ?? s.slice(span.label![0], span.label![1]));
    copied = i = span.end;
  }
  if (copied === 0) return s;
  out.push(s.slice(copied));
  return out.join('');
}

/** "```" ... "```" (the shortest such span, as `/```[\s\S]*?```/`). */
const codeFenceAt: SpanAt = (s, i, find) => {
  if (!s.startsWith('```', i)) return null;
  const close = find.next('```', i + 3);
  return close < 0 ? null : { end: close + 3 };
};

/** `![alt](target)`, as `/!\[[^\]]*\]\([^)]*\)/`: the first `]` after the `[`, a `(` right after it, the first `)` after that. */
const markdownImageAt: SpanAt = (s, i, find) => {
  if (s.charCodeAt(i) !== 0x21 || s.charCodeAt(i + 1) !== 0x5b) return null;
  const close = find.next(']', i + 2);
  if (close < 0 || s.charCodeAt(close + 1) !== 0x28) return null;
  const paren = find.next(')', close + 2);
  return paren < 0 ? null : { end: paren + 1 };
};

/** `[label](target)` -> label, as `/\[([^\]]+)\]\([^)]*\)/` (the label is not empty). */
const markdownLinkAt: SpanAt = (s, i, find) => {
  if (s.charCodeAt(i) !== 0x5b) return null;
  const close = find.next(']', i + 1);
  if (close <= i + 1 || s.charCodeAt(close + 1) !== 0x28) return null;
  const paren = find.next(')', close + 2);
  return paren < 0 ? null : { end: paren + 1, label: [i + 1, close] };
};

/**
 * `indexOf` for scans that only move forward: the answer for a position is remembered until the scan passes
 * it (and a miss is remembered for good), so a pass searches each stretch of the text for a needle once.
 * Without this, `![![![...` (each `![` searching to the end for a `]`) would be quadratic.
 */
class Finders {
  private readonly memo = new Map<string, { from: number; at: number }>();

  constructor(private readonly s: string) {}

  next(needle: string, from: number): number {
    const m = this.memo.get(needle);
    if (m && from >= m.from && (m.at < 0 || m.at >= from)) return m.at;
    const at = this.s.indexOf(needle, from);
    this.memo.set(needle, { from, at });
    return at;
  }
}
