import type * as Yaml from 'yaml';
import { jsonDepthExceeds } from '@svc/events';

// The bounds every YAML config is read within, and the parse itself (config-yaml.ts reads and caches files,
// config-yaml-edit.ts edits their text in place).

/** `yaml` (72 modules) is loaded by the first read of a config, not at the relay's start. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const yaml = (): typeof Yaml => require('yaml') as typeof Yaml;

/**
 * The bounds on every YAML config the relay reads (the global config.yaml, profile configs, voice
 * settings). The host's files are hostile input like any peer's: the `yaml` package's duplicate-key
 * check is quadratic in a mapping's keys (64,000 keys took 49 s a parse), explicit collection keys
 * (`? ? ? k`) are exponential when made into JS, and deep block nesting (`- - - - ...`) overflows the
 * stack. So a config is refused before it is parsed when it is larger than MAX_CONFIG_BYTES, when it has
 * more than MAX_CONFIG_TOKENS lines and structure indicators, or nests deeper than MAX_CONFIG_NESTING;
 * it is parsed with the duplicate-key check off (a linear one with a Set runs after), and collection keys
 * are refused before the document becomes JS. A realistic config (a few hundred lines) is far inside.
 */
export const MAX_CONFIG_BYTES = 256 * 1024;
/** Lines plus structure indicators (`: `, `- `, `? `, `,`, `[`, `{`, `&`, `*`, `!`, `---`, `...`, `%`). */
export const MAX_CONFIG_TOKENS = 10_000;
/** Per line: the indentation (columns) plus the block indicators on it (`- - - x` nests three deep). */
export const MAX_CONFIG_NESTING = 128;
/** Flow nesting (`[[[...]]]`), the relay's JSON bound. */
export const MAX_CONFIG_FLOW_DEPTH = 64;
const MAX_ALIAS_COUNT = 100;
/** What the parsed document may hold at most (a second, exact count after the cheap one above). */
const MAX_CONFIG_NODES = 2 * MAX_CONFIG_TOKENS;

export type YamlMap = Record<string, unknown>;

/** `too_large`: past a bound above; `unreadable`: cannot be opened or read; `invalid`: not a YAML mapping the relay accepts. */
export type ConfigProblem = 'too_large' | 'unreadable' | 'invalid';

/** A config file the relay will not use. The message names the file by its base name only (phones may see it). */
export class ConfigFileError extends Error {
  constructor(
    readonly problem: ConfigProblem,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigFileError';
  }
}

/**
 * The cheap look before any parse: one pass over the text, no regular expression. Returns why the text
 * is refused, or null.
 */
export function configTextExceeds(text: string, name = 'the config'): ConfigFileError | null {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CONFIG_BYTES) return new ConfigFileError('too_large', `${name} is ${bytes} bytes; the relay reads at most ${MAX_CONFIG_BYTES}`);
  let tokens = 0;
  let indent = 0;
  let nesting = 0;
  let atLineStart = true;
  const tooMany = () => new ConfigFileError('too_large', `${name} has more than ${MAX_CONFIG_TOKENS} lines and YAML structure indicators`);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) {
      if (++tokens > MAX_CONFIG_TOKENS) return tooMany();
      atLineStart = true;
      indent = 0;
      nesting = 0;
      continue;
    }
    if (atLineStart) {
      if (c === 0x20) {
        if (++indent > MAX_CONFIG_NESTING) return tooDeep(name);
        continue;
      }
      atLineStart = false;
      // `---`, `...` and `%` directives: a document boundary each.
      if (c === 0x2d || c === 0x2e || c === 0x25) {
        if (++tokens > MAX_CONFIG_TOKENS) return tooMany();
        if (c !== 0x2d) continue;
      }
    }
    // , [ { & * !
    if (c === 0x2c || c === 0x5b || c === 0x7b || c === 0x26 || c === 0x2a || c === 0x21) {
      if (++tokens > MAX_CONFIG_TOKENS) return tooMany();
    } else if (c === 0x2d || c === 0x3f || c === 0x3a) {
      // - ? : followed by a space, a tab, a line end or the end: a block indicator.
      const n = i + 1 < text.length ? text.charCodeAt(i + 1) : 0x0a;
      if (n === 0x20 || n === 0x09 || n === 0x0a || n === 0x0d) {
        if (++tokens > MAX_CONFIG_TOKENS) return tooMany();
        if (indent + ++nesting > MAX_CONFIG_NESTING) return tooDeep(name);
      }
    }
  }
  if (jsonDepthExceeds(text, MAX_CONFIG_FLOW_DEPTH)) return tooDeep(name);
  return null;
}

function tooDeep(name: string): ConfigFileError {
  return new ConfigFileError('too_large', `${name} nests deeper than the relay reads (${MAX_CONFIG_NESTING} levels)`);
}

/**
 * Parses a config's text within the bounds: a mapping (or `{}` for an empty document), its keys unique
 * (checked in linear time) and scalar. Throws ConfigFileError. The Document is returned too, for edits
 * in place (its nodes carry their source ranges).
 */
export function parseConfigYaml(text: string, name = 'the config'): { doc: Yaml.Document.Parsed; data: YamlMap } {
  const refused = configTextExceeds(text, name);
  if (refused) throw refused;
  const y = yaml();
  // Parse errors are thrown away (the first is reported): their stack traces are most of their cost.
  const traceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  let doc: Yaml.Document.Parsed;
  try {
    doc = y.parseDocument(text, { uniqueKeys: false, prettyErrors: false, logLevel: 'silent' });
  } catch (err) {
    throw new ConfigFileError('invalid', `${name} is not YAML the relay can read (${(err as Error).message.slice(0, 120)})`);
  } finally {
    Error.stackTraceLimit = traceLimit;
  }
  if (doc.errors.length) {
    const e = doc.errors[0];
    throw new ConfigFileError('invalid', `${name} is not valid YAML (${e.message.slice(0, 120)} at line ${lineOf(text, e.pos[0])})`);
  }
  checkNodes(doc, name);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    throw new ConfigFileError('invalid', `${name} cannot be read (${(err as Error).message.slice(0, 120)})`);
  }
  if (data === null || data === undefined) return { doc, data: {} };
  if (!isMap(data)) throw new ConfigFileError('invalid', `${name} is not a YAML mapping`);
  return { doc, data };
}

/** Every node once, without recursion: the count, no collection keys, no duplicate keys in a mapping. */
function checkNodes(doc: Yaml.Document.Parsed, name: string): void {
  const y = yaml();
  const stack: unknown[] = [doc.contents];
  let nodes = 0;
  while (stack.length) {
    const n = stack.pop();
    if (n === null || n === undefined) continue;
    if (++nodes > MAX_CONFIG_NODES) throw new ConfigFileError('too_large', `${name} has more than ${MAX_CONFIG_NODES} YAML nodes`);
    if (y.isMap(n)) {
      const seen = new Set<unknown>();
      for (const pair of n.items) {
        const key = y.isAlias(pair.key) ? pair.key.resolve(doc) : pair.key;
        if (y.isCollection(key)) throw new ConfigFileError('invalid', `${name} has a mapping key that is a list or a mapping`);
        const k = y.isScalar(key) ? key.value : key === null || key === undefined ? null : key;
        if (seen.has(k)) throw new ConfigFileError('invalid', `${name} has the key "${String(k).slice(0, 60)}" twice in one mapping`);
        seen.add(k);
        stack.push(pair.value);
      }
    } else if (y.isSeq(n)) {
      for (const item of n.items) stack.push(item);
    }
  }
}

function lineOf(text: string, pos: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < pos; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

export const isMap = (v: unknown): v is YamlMap => typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
