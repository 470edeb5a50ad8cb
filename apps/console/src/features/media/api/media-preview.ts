import { API_BASE } from '@/lib/api-client';

/** The types the relay previews (raster images only: SVG can carry script). Others get no button. */
export const PREVIEW_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Mirrors the relay's cap; a bigger image is listed but not previewed. */
export const PREVIEW_MAX_BYTES = 10 * 1024 * 1024;

export const isPreviewable = (contentType: string, size: number): boolean =>
  PREVIEW_TYPES.has(contentType.split(';')[0].trim().toLowerCase()) && size <= PREVIEW_MAX_BYTES;

/**
 * `GET /console/api/media/:ref/preview` (loopback only) for an <img>: by the entry's token prefix,
 * never the token or the host path, since the URL ends up in browser history.
 */
export const mediaPreviewUrl = (tokenPrefix: string): string => `${API_BASE}/media/${encodeURIComponent(tokenPrefix)}/preview`;
