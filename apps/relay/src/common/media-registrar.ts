/**
 * The seam between features that produce files (bridge screenshots, phone attachments) and the media
 * registry. The media module provides it under MEDIA_REGISTRAR; a feature injects it with @Optional()
 * and answers 503 `media.unavailable` while no registry is present.
 */
export const MEDIA_REGISTRAR = Symbol('MEDIA_REGISTRAR');

export type RegisteredMedia = { token: string; expiresAt: number /* epoch seconds */ };

export interface MediaRegistrar {
  /** A file the relay wrote itself (screenshot, upload): deleted when its last token retires. */
  registerOwned(file: { path: string; contentType: string; fileName: string; sensitive?: boolean }, actor: string): Promise<RegisteredMedia>;
  /** A host path (as `/media/register` takes it), checked against the media policy; never owned. */
  registerPath(file: { path: string; contentType?: string; fileName?: string; sensitive?: boolean }, actor: string): Promise<RegisteredMedia>;
  /** The directory owned files must be written into (created, 0700). */
  ownedDir(): string;
  /**
   * The bytes of a live phone upload (`POST /media/upload`) named by its token, checked like a fetch
   * (same file, at most `maxBytes`); null for an unknown, expired or non-upload token.
   */
  readUpload(token: string, maxBytes: number): Promise<{ bytes: Buffer; contentType: string; expiresAt: number } | null>;
}
