import { DomainError, findPathMarkers, replacePathMarkers, type ClientNames } from '@svc/domain';
import * as nodePath from 'node:path';
import type { MediaRegistrar } from '../common/media-registrar';

export type MarkerRewrite = {
  text: string;
  registered: Array<{ path: string; token: string; expires_at: number }>;
  failed: Array<{ path: string; code: string; error: string }>;
};

/**
 * Turns each `MEDIA:<absolute path>` (or `MEDIA:"<path with spaces>"`) in `text` into
 * `MEDIA:svc-relay://<token>` (in the spelling in force) by registering the file through the media policy, so a phone only ever
 * sees tokens. A path that cannot be registered (missing, denied, too large) keeps its marker and is
 * listed in `failed`; the same path twice gets one token.
 */
export async function rewriteMediaMarkers(
  text: string,
  registrar: Pick<MediaRegistrar, 'registerPath'>,
  actor: string,
  names: ClientNames,
): Promise<MarkerRewrite> {
  const markers = findPathMarkers(text);
  const tokens = new Map<string, string>();
  const out: MarkerRewrite = { text, registered: [], failed: [] };
  for (const path of new Set(markers.map((m) => m.path))) {
    try {
      const r = await registrar.registerPath({ path, fileName: nodePath.basename(path) }, actor);
      tokens.set(path, r.token);
      out.registered.push({ path, token: r.token, expires_at: r.expiresAt });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      out.failed.push({ path, code: err.code, error: err.message });
    }
  }
  out.text = replacePathMarkers(text, markers, tokens, names);
  return out;
}
