/**
 * Chat media markers (spec 4.4): `MEDIA:<absolute path>` (bare path) and `MEDIA:<scheme><token>`.
 *
 * A bare path runs to the next whitespace, quote, bracket or `<>`; punctuation that ends a sentence
 * (`.,;:!?`) right after it is not part of the path. A path with spaces is written quoted:
 * `MEDIA:"/tmp/Screen Shot 1.png"`. Token markers are left alone.
 */
export type PathMarker = { start: number; end: number; path: string };

const MARKER_RE = /(?<![A-Za-z0-9_])MEDIA:(?:"(\/[^"\n]+)"|(\/[^\s"'`<>()[\]{}]+))/g;

export function findPathMarkers(text: string): PathMarker[] {
  const out: PathMarker[] = [];
  for (const m of text.matchAll(MARKER_RE)) {
    const start = m.index ?? 0;
    if (m[1] !== undefined) {
      out.push({ start, end: start + m[0].length, path: m[1] });
      continue;
    }
    const bare = m[2].replace(/(?<![.,;:!?])[.,;:!?]+$/, '');
    if (bare.length < 2) continue;
    out.push({ start, end: start + 'MEDIA:'.length + bare.length, path: bare });
  }
  return out;
}

/**
 * The scheme of the token markers the relay writes. The spec spells it `svc-relay://`, but the phone app
 * renders only `MEDIA:hermes-relay://<token>` (ChatHandler.kt's marker regex, BridgeCommandHandler.kt's
 * attachment fetch), so a marker in the spec's spelling would reach the phone as dead text. Both
 * spellings are read on input (`INPUT_TOKEN_SCHEMES`); docs/PROTOCOL.md "Brand spellings".
 */
export const MEDIA_TOKEN_SCHEME = 'hermes-relay://';
export const INPUT_TOKEN_SCHEMES = ['svc-relay://', 'hermes-relay://'] as const;

export function tokenMarker(token: string): string {
  return `MEDIA:${MEDIA_TOKEN_SCHEME}${token}`;
}

/** Replaces each marker whose path got a token; markers without one are left as they were. */
export function replacePathMarkers(text: string, markers: readonly PathMarker[], tokens: ReadonlyMap<string, string>): string {
  let out = '';
  let at = 0;
  for (const mk of markers) {
    const token = tokens.get(mk.path);
    if (token === undefined) continue;
    out += text.slice(at, mk.start) + tokenMarker(token);
    at = mk.end;
  }
  return out + text.slice(at);
}
