import { isDeepStrictEqual } from 'node:util';
import type * as Yaml from 'yaml';
import { ConfigFileError, isMap, parseConfigYaml, yaml, type YamlMap } from './config-yaml-parse';

/**
 * One edit of a config's text: the replaced range and what goes there. Edits are made on the text, not
 * by re-serialising the document, so every byte outside them stays as the operator wrote it: comments,
 * quoting (`"yes"`, `"NO"`), big integers, tags (`!!binary`), flow style and spacing.
 */
type Splice = { start: number; end: number; text: string };

export type ConfigEdit = {
  /** The new text. */
  text: string;
  /** What the edited text must read as (checked by parsing it again). */
  expect: YamlMap;
};

type Scalar = string | number | boolean;

/** A section (a top-level key) of a config: its keys set (a scalar value) or removed (null). */
export function editYamlSection(text: string, section: string, changed: Record<string, Scalar | null>, name = 'the config'): ConfigEdit {
  const { doc, data } = parseConfigYaml(text, name);
  const current = data[section];
  const next: YamlMap = { ...(isMap(current) ? current : {}) };
  for (const [k, v] of Object.entries(changed)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  const set = new Map<string, string | null>(Object.entries(changed).map(([k, v]) => [k, v === null ? null : yamlScalar(v)]));
  return finishEdit(text, name, section, doc, data, next, (sectionKey, map, refuse) => mapSplices(text, sectionKey, map, set, refuse, false));
}

/**
 * Lists in a section (`plugins: {enabled: [...], disabled: [...]}`): `add` appended where missing,
 * `remove` taken out wherever it is. A list that is absent is created (as `[item]`) only to add to it.
 */
export function editYamlLists(
  text: string,
  section: string,
  lists: Record<string, { add?: string; remove?: string }>,
  name = 'the config',
): ConfigEdit {
  const y = yaml();
  const { doc, data } = parseConfigYaml(text, name);
  const refuse = refuser(name);
  const current = data[section];
  if (current !== undefined && current !== null && !isMap(current)) throw refuse(`${section} is not a mapping`);
  const next: YamlMap = { ...(isMap(current) ? current : {}) };
  const finalLists = new Map<string, unknown[]>();
  for (const [k, { add, remove }] of Object.entries(lists)) {
    const was = next[k];
    if (was !== undefined && was !== null && !Array.isArray(was)) throw refuse(`${section}.${k} is not a list`);
    const items = ((was as unknown[] | null | undefined) ?? []).filter((x) => remove === undefined || x !== remove);
    if (add !== undefined && !items.includes(add)) items.push(add);
    if (was === undefined && items.length === 0) continue;
    next[k] = items;
    finalLists.set(k, items);
  }
  return finishEdit(text, name, section, doc, data, next, (sectionKey, map) => {
    const set = new Map<string, Source | null>();
    const seqEdits: Splice[] = [];
    for (const [k, items] of finalLists) {
      const pair = map.items.find((p) => scalarKeyOf(p.key) === k);
      const value = pair?.value as Yaml.Node | null | undefined;
      if (pair && y.isSeq(value)) seqEdits.push(...seqSplices(text, pair.key as Yaml.Node, value, lists[k], refuse));
      // A new list in a block mapping is written as a block list (`- item` lines), elsewhere as `[item]`.
      else set.set(k, listSource(items));
    }
    // Map insertions first: at the same offset, what is applied first ends up last (after a list's new item).
    return [...mapSplices(text, sectionKey, map, set, refuse, true), ...seqEdits];
  });
}

function refuser(name: string): (why: string) => ConfigFileError {
  return (why) => new ConfigFileError('invalid', `${name}: ${why}; the relay changes only what it can edit in place, so edit it by hand`);
}

/**
 * The common part of an edit: a missing or empty section is added as a whole; an existing one (a block
 * or flow mapping) is edited by `inSection`. The result is parsed again and must read exactly as
 * `next` in place of the section, with everything else as it was; otherwise nothing is written.
 */
function finishEdit(
  text: string,
  name: string,
  section: string,
  doc: Yaml.Document.Parsed,
  data: YamlMap,
  next: YamlMap,
  inSection: (sectionKey: Yaml.Node, map: Yaml.YAMLMap, refuse: (why: string) => ConfigFileError) => Splice[],
): ConfigEdit {
  const y = yaml();
  const refuse = refuser(name);
  const expect: YamlMap = { ...data, [section]: next };
  const whole = Object.entries(next).map(([k, v]): [string, Source] => [k, Array.isArray(v) ? listSource(v) : yamlScalar(v as Scalar)]);
  const root = doc.contents;
  const splices: Splice[] = [];
  if (root === null || (y.isScalar(root) && (root.value === null || root.value === undefined))) {
    if (data[section] === undefined && whole.length === 0) return { text, expect: data };
    splices.push({ start: text.length, end: text.length, text: `${text && !text.endsWith('\n') ? '\n' : ''}${blockSection(section, whole, 0)}` });
  } else {
    if (!y.isMap(root) || root.flow) throw refuse('its top level is not a block mapping');
    const pair = root.items.find((p) => scalarKeyOf(p.key) === section);
    if (!pair) {
      if (whole.length === 0) return { text, expect: data };
      const col = columnOf(text, (root.items[0].key as Yaml.Node).range![0]);
      splices.push({ start: text.length, end: text.length, text: `${text.endsWith('\n') ? '' : '\n'}${blockSection(section, whole, col)}` });
    } else {
      const keyNode = pair.key as Yaml.Node;
      const value = pair.value as Yaml.Node | null;
      if (value === null || (y.isScalar(value) && (value.value === null || value.value === undefined))) {
        if (whole.length === 0) return { text, expect: data };
        const end = value?.range ? value.range[1] : keyNode.range![1];
        splices.push({ start: keyNode.range![1], end, text: `: {${whole.map(([k, v]) => `${yamlScalar(k)}: ${flowOf(v)}`).join(', ')}}` });
      } else if (y.isMap(value)) splices.push(...inSection(keyNode, value, refuse));
      else throw refuse(`${section} is not a mapping`);
    }
  }
  const edited = applySplices(text, splices);
  let reread: YamlMap;
  try {
    reread = parseConfigYaml(edited, name).data;
  } catch {
    throw refuse(`changing ${section} would make it unreadable`);
  }
  if (!isDeepStrictEqual(reread, expect)) throw refuse(`changing ${section} in place would change other keys`);
  return { text: edited, expect };
}

/** A value's YAML source: one text, or a flow form and a block form (given the key's column) for a new key of a block mapping. */
type Source = string | { flow: string; block: (col: number) => string };
const flowOf = (src: Source) => (typeof src === 'string' ? src : src.flow);

/**
 * The splices that set (`set`: key to YAML source) and remove (null) keys of the mapping `map` (block or
 * flow), the value of `sectionKey`. A key holding a list or mapping is replaced only with `replaceCollections`.
 */
function mapSplices(
  text: string,
  sectionKey: Yaml.Node,
  map: Yaml.YAMLMap,
  set: ReadonlyMap<string, Source | null>,
  refuse: (why: string) => ConfigFileError,
  replaceCollections: boolean,
): Splice[] {
  const y = yaml();
  const out: Splice[] = [];
  const byKey = new Map<string, Yaml.Pair>();
  for (const p of map.items) {
    const k = scalarKeyOf(p.key);
    if (k !== null) byKey.set(k, p);
  }
  const removed = new Set<string>();
  const added: Array<[string, Source]> = [];
  for (const [k, src] of set) {
    const p = byKey.get(k);
    if (src === null) {
      if (p) removed.add(k);
    } else if (p) {
      const keyNode = p.key as Yaml.Node;
      const value = p.value as Yaml.Node | null;
      if (value !== null && y.isCollection(value) && !replaceCollections) throw refuse(`${k} holds a list or a mapping`);
      const end = value?.range ? value.range[1] : keyNode.range![1];
      const tail = end > keyNode.range![1] && text[end - 1] === '\n' ? '\n' : '';
      out.push({ start: keyNode.range![1], end, text: `: ${flowOf(src)}${tail}` });
    } else added.push([k, src]);
  }
  if (map.flow) {
    for (const k of removed) {
      const p = byKey.get(k)!;
      const value = p.value as Yaml.Node | null;
      out.push(flowItemRemoval(text, (p.key as Yaml.Node).range![0], value?.range ? value.range[1] : (p.key as Yaml.Node).range![1]));
    }
    if (added.length) out.push(flowInsertion(text, map, '}', added.map(([k, v]) => `${yamlScalar(k)}: ${flowOf(v)}`).join(', '), refuse));
    return out;
  }
  // A block mapping: lines removed whole, new lines after its last item at its items' column.
  if (removed.size === map.items.length && added.length === 0) {
    // Every key goes: the section becomes `{}` (never a null the agent would trip over).
    return [{ start: sectionKey.range![1], end: lineEndAfter(text, map.range![1]), text: ': {}\n' }];
  }
  for (const k of removed) {
    const p = byKey.get(k)!;
    const keyNode = p.key as Yaml.Node;
    const start = lineStart(text, keyNode.range![0]);
    if (text.slice(start, keyNode.range![0]).trim() !== '') throw refuse(`${k} does not start its own line`);
    const value = p.value as Yaml.Node | null;
    out.push({ start, end: lineEndAfter(text, value?.range ? value.range[1] : keyNode.range![1]), text: '' });
  }
  if (added.length) {
    const firstKey = map.items[0].key as Yaml.Node;
    const col = columnOf(text, firstKey.range![0]);
    if (text.slice(lineStart(text, firstKey.range![0]), firstKey.range![0]).trim() !== '') throw refuse('its first key does not start its own line');
    const at = lineEndAfter(text, map.range![1]);
    const lines = added.map(([k, v]) => `${' '.repeat(col)}${yamlScalar(k)}:${typeof v === 'string' ? ` ${v}` : v.block(col)}\n`).join('');
    out.push({ start: at, end: at, text: `${at > 0 && text[at - 1] !== '\n' ? '\n' : ''}${lines}` });
  }
  return out;
}

/** The splices that take `remove` out of a list (every occurrence) and append `add` when it is not there. */
function seqSplices(
  text: string,
  listKey: Yaml.Node,
  seq: Yaml.YAMLSeq,
  edit: { add?: string; remove?: string },
  refuse: (why: string) => ConfigFileError,
): Splice[] {
  const y = yaml();
  const items = seq.items as Yaml.Node[];
  const gone = items.filter((n) => edit.remove !== undefined && y.isScalar(n) && n.value === edit.remove);
  const add = edit.add !== undefined && !items.some((n) => y.isScalar(n) && n.value === edit.add) ? yamlScalar(edit.add) : null;
  const out: Splice[] = [];
  if (seq.flow) {
    for (const n of gone) out.push(flowItemRemoval(text, n.range![0], n.range![1]));
    if (add !== null) out.push(flowInsertion(text, seq, ']', add, refuse));
    return out;
  }
  if (gone.length === items.length && add === null)
    return gone.length ? [{ start: listKey.range![1], end: lineEndAfter(text, seq.range![1]), text: ': []\n' }] : [];
  const dashLine = (n: Yaml.Node) => {
    const start = lineStart(text, n.range![0]);
    if (text.slice(start, n.range![0]).trim() !== '-') throw refuse('a list item does not start its own line');
    return start;
  };
  for (const n of gone) out.push({ start: dashLine(n), end: lineEndAfter(text, n.range![1]), text: '' });
  if (add !== null) {
    const first = dashLine(items[0]);
    const col = text.indexOf('-', first) - first;
    const at = lineEndAfter(text, seq.range![1]);
    out.push({ start: at, end: at, text: `${at > 0 && text[at - 1] !== '\n' ? '\n' : ''}${' '.repeat(col)}- ${add}\n` });
  }
  return out;
}

/** One flow item (`a: 1` of a mapping, `x` of a list) out, with the comma that separated it. */
function flowItemRemoval(text: string, from: number, to: number): Splice {
  let start = from;
  let end = to;
  let after = end;
  while (after < text.length && (text[after] === ' ' || text[after] === '\t')) after++;
  if (text[after] === ',') {
    end = after + 1;
    while (end < text.length && (text[end] === ' ' || text[end] === '\t')) end++;
  } else {
    let before = start - 1;
    while (before >= 0 && (text[before] === ' ' || text[before] === '\t')) before--;
    if (text[before] === ',') start = before;
  }
  return { start, end, text: '' };
}

/** `entries` put before a flow collection's closing bracket, after a comma when it has items. */
function flowInsertion(text: string, node: Yaml.Node, close: '}' | ']', entries: string, refuse: (why: string) => ConfigFileError): Splice {
  const at = node.range![1] - 1;
  if (text[at] !== close) throw refuse('a flow collection whose end it cannot find');
  let before = at - 1;
  while (before > node.range![0] && (text[before] === ' ' || text[before] === '\t' || text[before] === '\n' || text[before] === '\r')) before--;
  const open = text[before] === '{' || text[before] === '[';
  const comma = text[before] === ',';
  return { start: before + 1, end: before + 1, text: open ? entries : comma ? ` ${entries}` : `, ${entries}` };
}

function flowList(items: unknown[]): string {
  return `[${items.map((x) => (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean' ? yamlScalar(x) : JSON.stringify(x))).join(', ')}]`;
}

function blockSection(section: string, entries: Array<[string, Source]>, col: number): string {
  const pad = ' '.repeat(col);
  return `${pad}${yamlScalar(section)}:\n${entries.map(([k, v]) => `${pad}  ${yamlScalar(k)}:${typeof v === 'string' ? ` ${v}` : v.block(col + 2)}\n`).join('')}`;
}

/** A list's source: `[a, b]`, or `- a` lines two columns in from its key (a new list in a block mapping). */
function listSource(items: unknown[]): Source {
  return { flow: flowList(items), block: (col) => items.map((x) => `\n${' '.repeat(col + 2)}- ${flowList([x]).slice(1, -1)}`).join('') };
}

function applySplices(text: string, splices: Splice[]): string {
  const sorted = [...splices].sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  let limit = Infinity;
  for (const s of sorted) {
    if (s.end > limit) throw new ConfigFileError('invalid', 'overlapping edits');
    out = out.slice(0, s.start) + s.text + out.slice(s.end);
    limit = s.start;
  }
  return out;
}

function scalarKeyOf(key: unknown): string | null {
  const y = yaml();
  return y.isScalar(key) && typeof key.value === 'string' ? key.value : null;
}

function lineStart(text: string, pos: number): number {
  return text.lastIndexOf('\n', pos - 1) + 1;
}

function columnOf(text: string, pos: number): number {
  return pos - lineStart(text, pos);
}

/** The start of the line after `pos` (or `pos` itself when it already starts a line; the end of the text at the last line). */
function lineEndAfter(text: string, pos: number): number {
  if (pos > 0 && text[pos - 1] === '\n') return pos;
  const nl = text.indexOf('\n', pos);
  return nl === -1 ? text.length : nl + 1;
}

/** YAML 1.1 words PyYAML reads as booleans or null: never written plain. */
const YAML11_WORDS = new Set(['y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null']);

/**
 * A scalar as the agent (PyYAML, YAML 1.1) and the relay (YAML 1.2) both read it back: numbers and
 * booleans plain; a string plain only when it starts with a letter, holds letters, digits and `_+./-`
 * and is no 1.1 boolean or null word; anything else double-quoted with every non-ASCII character escaped.
 */
export function yamlScalar(v: string | number | boolean): string {
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new ConfigFileError('invalid', `the relay writes whole numbers only (${String(v).slice(0, 40)})`);
    return String(v);
  }
  if (isPlainSafe(v)) return v;
  let out = '"';
  for (const ch of v) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

function isPlainSafe(s: string): boolean {
  if (s.length === 0 || s.length > 256 || YAML11_WORDS.has(s.toLowerCase())) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    if (i === 0 ? !letter : !(letter || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2b || c === 0x2e || c === 0x2f || c === 0x2d)) return false;
  }
  return true;
}
