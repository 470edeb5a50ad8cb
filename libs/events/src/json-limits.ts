/**
 * Untrusted JSON is parsed by V8 without recursion, but what walks the parsed value afterwards (the
 * validation pipe, class-transformer, a projection, structured logging) recurses: 20,000 levels blew
 * the stack into a 500. Every entry point checks the nesting on the raw text first, in one pass that
 * never recurses, and refuses past the limit before anything else sees the value.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Files the relay wrote itself and reads back (event log records, snapshots, the lock file, the injected
 * context file): a record or read model holds request data at most MAX_JSON_DEPTH deep plus its own few
 * levels, so a file past this limit was not written by the relay and is refused like any corruption.
 */
export const MAX_FILE_JSON_DEPTH = 256;

/** The deepest `{`/`[` nesting of a JSON text, stopping early past `limit` (strings and escapes respected). */
export function jsonDepthExceeds(text: string, limit: number = MAX_JSON_DEPTH): boolean {
  if (openersAtMost(text, limit)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Fewer openers than the limit cannot nest past it: the common case, counted with native indexOf. */
function openersAtMost(text: string, limit: number): boolean {
  let n = 0;
  for (const opener of ['{', '[']) {
    for (let i = text.indexOf(opener); i !== -1; i = text.indexOf(opener, i + 1)) if (++n > limit) return false;
  }
  return true;
}

/** JSON.parse that refuses a text nested deeper than `limit` with a `JsonTooDeepError`. */
export function parseJsonBounded(text: string, limit: number = MAX_JSON_DEPTH): unknown {
  if (jsonDepthExceeds(text, limit)) throw new JsonTooDeepError(limit);
  return JSON.parse(text) as unknown;
}

export class JsonTooDeepError extends Error {
  readonly code = 'json_too_deep';
  readonly statusCode = 400;
  constructor(readonly limit: number) {
    super(`the JSON nests deeper than ${limit} levels`);
  }
}
