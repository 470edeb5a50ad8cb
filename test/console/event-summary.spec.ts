import * as path from 'node:path';
import * as ts from 'typescript';
import type { ConsoleEvent } from '../../libs/events/src/console-event';
import { typeMatcher } from '../../libs/events/src/event-types-match';
import { redact } from '../../apps/relay/src/console/console-redaction';
import { SECRET_FIELDS } from '../../apps/relay/src/common/auth/secret-fields';
import { FAMILIES } from '../../apps/console/src/lib/event-families';
import { summary, SUMMARIES } from '../../apps/console/src/lib/event-summary';

/**
 * Every event type of the relay's union, read from its source (libs/events/src/relay-event.ts) by the
 * TypeScript checker, with a sample of its data built from its declared fields: a type someone adds to
 * the union later is found here without anyone listing it.
 */
function unionFromSource(): Array<{ type: string; data: Record<string, unknown> }> {
  const file = path.resolve(__dirname, '../../libs/events/src/relay-event.ts');
  const program = ts.createProgram([file], { strict: true, noEmit: true, skipLibCheck: true, lib: ['lib.es2022.d.ts'], types: [] });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  const union = checker.getDeclaredTypeOfSymbol(module.exports!.get('RelayEvent' as ts.__String)!);
  return (union.isUnion() ? union.types : [union]).map((member) => {
    const prop = (name: string) => checker.getTypeOfSymbol(checker.getPropertyOfType(member, name)!);
    const type = prop('type');
    if (!type.isStringLiteral()) throw new Error(`an event whose type is not one string: ${checker.typeToString(type)}`);
    return { type: type.value, data: sample(checker, prop('data'), 'data', 0) as Record<string, unknown> };
  });
}

/** A value of `type` for the field `key`: every free string is the marker `«key»`, so a test can see where it went. */
function sample(checker: ts.TypeChecker, type: ts.Type, key: string, depth: number): unknown {
  if (depth > 6) return null;
  if (type.isUnion()) {
    const present = type.types.filter((t) => !(t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)));
    // Prefer an object or a free string (they carry the markers) over a literal.
    const pick = present.find((t) => t.flags & ts.TypeFlags.Object) ?? present.find((t) => t.flags & ts.TypeFlags.String) ?? present[0];
    return pick ? sample(checker, pick, key, depth) : null;
  }
  if (type.isStringLiteral()) return type.value;
  if (type.isNumberLiteral()) return type.value;
  if (type.flags & ts.TypeFlags.BooleanLiteral) return (type as unknown as { intrinsicName: string }).intrinsicName === 'true';
  if (type.flags & ts.TypeFlags.String) return `«${key}»`;
  if (type.flags & ts.TypeFlags.Number) return 7;
  if (type.flags & ts.TypeFlags.Boolean) return true;
  if (type.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)) return null;
  if (checker.isArrayType(type)) return [sample(checker, checker.getTypeArguments(type as ts.TypeReference)[0], key, depth + 1)];
  if (type.flags & (ts.TypeFlags.Object | ts.TypeFlags.Intersection)) {
    const out: Record<string, unknown> = {};
    const index = checker.getIndexInfoOfType(type, ts.IndexKind.String);
    if (index) out[`${key}Key`] = sample(checker, index.type, `${key}Value`, depth + 1);
    for (const p of checker.getPropertiesOfType(type)) out[p.name] = sample(checker, checker.getTypeOfSymbol(p), p.name, depth + 1);
    return out;
  }
  return `«${key}»`;
}

const UNION = unionFromSource();
const asConsoleEvent = (e: { type: string; data: Record<string, unknown> }, actor = 'system'): ConsoleEvent => ({
  seq: 1,
  id: 'e1',
  at: '2026-03-01T12:00:00.000Z',
  type: e.type,
  actor,
  // What the browser receives: the relay's own redaction (digests cut, secret-named fields withheld).
  data: redact(e.data) as Record<string, unknown>,
  hash: '0'.repeat(12),
});

/**
 * Fields whose values are personal content or secrets: message, reply and notification text and titles,
 * free metadata, where a desktop user works, and every secret-named field. A summary names none of them.
 */
const NEVER_IN_A_SUMMARY = ['text', 'title', 'subText', 'metadata', 'cwd', 'gitRoot', ...SECRET_FIELDS.map(camel)];

function camel(snake: string): string {
  return snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

describe('event summaries: words for every event type of the union', () => {
  it('reads the union from its source (not a list kept by hand)', () => {
    expect(UNION.length).toBeGreaterThanOrEqual(82);
    expect(UNION.map((e) => e.type)).toEqual(
      expect.arrayContaining(['relay.started', 'voice.transcribed', 'secure_link.reach_changed', 'trust.ended']),
    );
    expect(new Set(UNION.map((e) => e.type)).size).toBe(UNION.length);
  });

  it.each(UNION.map((e) => [e.type, e] as const))('%s has a one-line summary in words', (type, e) => {
    expect(Object.prototype.hasOwnProperty.call(SUMMARIES, type)).toBe(true);
    const text = summary(asConsoleEvent(e));
    expect(text).not.toMatch(/no words for it|cannot read in words/);
    expect(text).not.toMatch(/[{}[\]"]/); // not JSON
    expect(text).not.toContain('undefined');
    expect(text).not.toContain('[object Object]');
    expect(text).not.toContain('\n');
    expect(text.length).toBeGreaterThan(8);
    expect(text.length).toBeLessThan(240);
  });

  it.each(UNION.map((e) => [e.type, e] as const))('%s: no personal content or secret in its summary', (_type, e) => {
    const text = summary(asConsoleEvent(e));
    for (const field of NEVER_IN_A_SUMMARY) expect(text).not.toContain(`«${field}»`);
  });

  it('summaries never read the secret itself: a secret-named field reaches the browser as [redacted] and no summary shows it', () => {
    for (const e of UNION) expect(summary(asConsoleEvent(e))).not.toContain('[redacted]');
  });

  it('the same types and no others: the map is keyed by the union', () => {
    expect(Object.keys(SUMMARIES).sort()).toEqual(UNION.map((e) => e.type).sort());
  });

  it('a type this console does not know (a newer relay) is named in words, its data never dumped', () => {
    const text = summary(asConsoleEvent({ type: 'future.thing_happened', data: { text: 'private words', n: 1 } }));
    expect(text).toBe('future.thing_happened (this console has no words for it yet; open it for its fields)');
  });

  it('an older record missing fields is still one line, never a crash', () => {
    for (const e of UNION) expect(() => summary(asConsoleEvent({ type: e.type, data: {} }))).not.toThrow();
  });

  it('words that read an actor or an operator action', () => {
    const closed = UNION.find((e) => e.type === 'terminal.closed')!;
    expect(summary(asConsoleEvent(closed, 'operator'))).toMatch(/ended by the operator/);
    expect(
      summary(asConsoleEvent({ type: 'ratelimit.cleared', data: { ip: '198.51.100.7', reason: 'unblocked by the operator' } }, 'operator')),
    ).toBe('rate-limit block on 198.51.100.7 lifted (unblocked by the operator)');
  });
});

describe('event family filters', () => {
  it.each(UNION.map((e) => [e.type] as const))('%s falls under a family filter', (type) => {
    const covering = FAMILIES.filter((f) => f.value !== '' && typeMatcher(f.value)(type)).map((f) => f.label);
    expect(covering).toHaveLength(1);
  });

  it('every filter names at least one type of the union (none is stale)', () => {
    for (const f of FAMILIES.filter((x) => x.value !== '')) expect(UNION.some((e) => typeMatcher(f.value)(e.type))).toBe(true);
  });
});
