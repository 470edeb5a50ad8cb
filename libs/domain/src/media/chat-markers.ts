import { RELAY_SCHEMES, type ClientNames } from '../spelling';

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
 * Token markers are written in the spelling in force (`MEDIA:svc-relay://<token>` by the spec;
 * `MEDIA:hermes-relay://<token>` under RELAY_CLIENT_SPELLING=hermes, the only one the phone app renders:
 * ChatHandler.kt's marker regex, BridgeCommandHandler.kt's attachment fetch). Both are read on input.
 */
export const INPUT_TOKEN_SCHEMES = RELAY_SCHEMES;

export function tokenMarker(token: string, names: ClientNames): string {
  return `${names.mediaMarkerPrefix}${token}`;
}

/** Replaces each marker whose path got a token; markers without one are left as they were. */
export function replacePathMarkers(text: string, markers: readonly PathMarker[], tokens: ReadonlyMap<string, string>, names: ClientNames): string {
  let out = '';
  let at = 0;
  for (const mk of markers) {
    const token = tokens.get(mk.path);
    if (token === undefined) continue;
    out += text.slice(at, mk.start) + tokenMarker(token, names);
    at = mk.end;
  }
  return out + text.slice(at);
}
