import { DomainError, mediaTokenOf, phoneMediaMarker, type ClientNames } from '@svc/domain';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Clock } from '../common/loop/clock';
import type { MediaRegistrar } from '../common/media-registrar';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const MAX_SCREENSHOT_BYTES = 12 * 1024 * 1024;
/** Screenshots whose media entry the relay remembers for the console's playback (the newest; older ones drop). */
export const SHOTS_REMEMBERED = 2000;

/**
 * The bridge's file work, apart from command correlation: screenshots (the app's upload, or a PNG the
 * phone sent inline, stored as an owned media file) and attachments rewritten into media tokens, all
 * through the media registrar.
 */
export class BridgeMedia {
  /**
   * A screenshot command's media entry (its token prefix, never the token), for the console's playback of MCP
   * sessions (issue 40, item 6). Held in memory: after a restart the playback shows "media expired" for
   * screenshots taken before it, even when their file still lives.
   */
  private readonly shots = new Map<string, string>();

  constructor(
    private readonly media: MediaRegistrar | undefined,
    private readonly clock: Clock,
    /** The spelling in force: markers go to the phone in it. */
    private readonly names: ClientNames,
  ) {}

  /** Screenshots need the media registry; without one the route refuses before anything is sent. */
  assertAvailable(): void {
    if (!this.media) throw mediaUnavailable();
  }

  /**
   * Attachments as the phone reads them: every media reference (a `MEDIA:svc-relay://` or
   * `MEDIA:hermes-relay://` marker, `media_token`, `token`) becomes `media` in the app's scheme plus
   * `media_token`; a host path is registered first.
   */
  async rewriteAttachments(body: Record<string, unknown>, actor: string): Promise<void> {
    const list = body.attachments;
    if (!Array.isArray(list)) return;
    const out: Array<Record<string, unknown>> = [];
    for (const a of list as Array<Record<string, unknown>>) {
      const meta = {
        ...(a.content_type ? { content_type: a.content_type } : {}),
        ...(a.file_name ? { file_name: a.file_name } : {}),
      };
      if (typeof a.path !== 'string') {
        const ref = [a.media, a.media_token, a.token].find((v) => typeof v === 'string') as string;
        const token = mediaTokenOf(ref)!;
        out.push({ media: phoneMediaMarker(token, this.names), media_token: token, ...meta });
        continue;
      }
      if (!this.media) throw mediaUnavailable();
      const reg = await this.media.registerPath(
        {
          path: a.path,
          ...(typeof a.content_type === 'string' ? { contentType: a.content_type } : {}),
          ...(typeof a.file_name === 'string' ? { fileName: a.file_name } : {}),
        },
        actor,
      );
      out.push({
        media: phoneMediaMarker(reg.token, this.names),
        media_token: reg.token,
        ...meta,
        file_name: typeof a.file_name === 'string' ? a.file_name : path.basename(a.path),
      });
    }
    body.attachments = out;
  }

  /** The media entry (token prefix) of a screenshot command's image, if this relay run stored one. */
  shotOf(requestId: string): string | null {
    return this.shots.get(requestId) ?? null;
  }

  private remember(requestId: string, token: string): void {
    this.shots.set(requestId, token.slice(0, 8));
    if (this.shots.size > SHOTS_REMEMBERED) this.shots.delete(this.shots.keys().next().value!);
  }

  /** The app's screenshot answer (an uploaded PNG's token), given to callers as token, markers and `image`. */
  async uploadedScreenshot(
    requestId: string,
    token: string,
    result: Record<string, unknown>,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    if (!this.media) throw mediaUnavailable();
    const file = await this.media.readUpload(token, MAX_SCREENSHOT_BYTES);
    if (!file) throw new DomainError('bridge.bad_screenshot', 'upstream', "the phone's screenshot is not a live upload on this relay");
    const png = decodePng({ png_base64: file.bytes.toString('base64') });
    if (typeof png === 'string') throw new DomainError('bridge.bad_screenshot', 'upstream', png);
    this.remember(requestId, token);
    return { status: 200, body: screenshotBody(result, token, file.expiresAt, png, this.names) };
  }

  async storeScreenshot(
    requestId: string,
    tokenPrefix: string,
    png: { bytes: Buffer; width: number; height: number },
    result: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    if (!this.media) throw mediaUnavailable();
    const dir = this.media.ownedDir();
    const file = path.join(dir, `screenshot-${requestId}.png`);
    await fs.promises.writeFile(file, png.bytes, { mode: 0o600, flag: 'wx' });
    const stamp = this.clock.now().toISOString().replace(/[:.]/g, '-');
    try {
      const reg = await this.media.registerOwned(
        { path: file, contentType: 'image/png', fileName: `screenshot-${stamp}.png`, sensitive: true },
        `device:${tokenPrefix}`,
      );
      this.remember(requestId, reg.token);
      return screenshotBody(result, reg.token, reg.expiresAt, png, this.names);
    } catch (err) {
      await fs.promises.rm(file, { force: true });
      throw err;
    }
  }
}

/**
 * A screenshot as every caller reads it: android_tool.py decodes `image` (base64) and prints
 * `width`x`height`; token users read `token` / `media_token` / `media` (the app's marker) / `marker`.
 */
function screenshotBody(
  result: Record<string, unknown>,
  token: string,
  expiresAt: number,
  png: { bytes: Buffer; width: number; height: number },
  names: ClientNames,
): Record<string, unknown> {
  const extra = Object.fromEntries(
    Object.entries(result).filter(([k]) => !['png_base64', 'image_base64', 'data', 'base64', 'image', 'media'].includes(k)),
  );
  return {
    ...extra,
    ok: true,
    token,
    media_token: token,
    media: phoneMediaMarker(token, names),
    marker: phoneMediaMarker(token, names),
    expires_at: expiresAt,
    content_type: 'image/png',
    width: png.width,
    height: png.height,
    size_bytes: png.bytes.length,
    image: png.bytes.toString('base64'),
  };
}

function mediaUnavailable(): DomainError {
  return new DomainError('media.unavailable', 'unavailable', 'the media registry is not available on this relay');
}

/** The phone's screenshot, checked: base64 of a real PNG, bounded in size. */
export function decodePng(result: Record<string, unknown>): { bytes: Buffer; width: number; height: number } | string {
  const b64 = [result.png_base64, result.image_base64, result.base64, result.data].find((v) => typeof v === 'string') as string | undefined;
  if (!b64) return 'the phone sent no screenshot (png_base64)';
  if (b64.length > (MAX_SCREENSHOT_BYTES * 4) / 3 + 4) return 'the screenshot is larger than the relay accepts';
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length < 33 || !bytes.subarray(0, 8).equals(PNG_MAGIC) || bytes.toString('ascii', 12, 16) !== 'IHDR')
    return 'the phone sent something that is not a PNG';
  return { bytes, width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}
