/* eslint-disable @typescript-eslint/no-require-imports */
import { DomainError } from '@svc/domain';
import type * as Sharp from 'sharp';

/** sharp's function as `require` gives it (its CommonJS export is the function itself). */
type SharpFn = typeof Sharp.default;

/*
 * A phone's screenshot made into an image an agent can use (issue 40, item 1): scaled so its long side is at
 * most `maxSide` (Claude refuses images over 2,000 px a side), encoded as JPEG, WebP or PNG. The PNG is the
 * phone's, so untrusted: its size in bytes is bounded before it reaches here (bridge-media.ts), its pixel
 * dimensions are checked from its header before anything is decoded, and sharp is told the same bound
 * (`limitInputPixels`) so a header that lies cannot make it allocate more.
 */

export const SCREEN_FORMATS = ['jpeg', 'webp', 'png'] as const;
export type ScreenFormat = (typeof SCREEN_FORMATS)[number];

/** The largest phone screen decoded: a side of 8,192 px and 40 MP (a 4K tablet is 8.3 MP; 40 MP of RGBA is 160 MiB). */
export const MAX_PHONE_SIDE = 8192;
export const MAX_PHONE_PIXELS = 40_000_000;
/** The bounds of `max_side`: below 64 px nothing on a phone is legible; above the phone's own bound nothing is scaled. */
export const MIN_MAX_SIDE = 64;
export const DEFAULT_QUALITY = 80;

export type ScreenRequest = { maxSide: number; format: ScreenFormat; quality: number };

/** What the agent is told about the image (the tool's structured content): the scale maps its coordinates back. */
export type ScreenImage = {
  width: number;
  height: number;
  phone_width: number;
  phone_height: number;
  /** Image pixels per phone pixel (1 when the phone's screen fits); a point (x, y) in the image is (x / scale, y / scale) on the phone. */
  scale: number;
  format: ScreenFormat;
  bytes: number;
};

const MIME: Record<ScreenFormat, string> = { jpeg: 'image/jpeg', webp: 'image/webp', png: 'image/png' };
export const mimeOf = (f: ScreenFormat): string => MIME[f];

/** sharp is a native module: loaded by the first screenshot, not at the relay's start. */
let sharpModule: SharpFn | null = null;
function sharp(): SharpFn {
  if (!sharpModule) {
    sharpModule = require('sharp') as SharpFn;
    // No cache of decoded images: each screenshot is decoded once, and a cache would keep phones' screens in memory.
    sharpModule.cache(false);
  }
  return sharpModule;
}

/** The output size for a phone screen: the long side at most maxSide, never enlarged. */
export function fitInside(phoneWidth: number, phoneHeight: number, maxSide: number): { width: number; height: number; scale: number } {
  const scale = Math.min(1, maxSide / Math.max(phoneWidth, phoneHeight));
  return { width: Math.max(1, Math.round(phoneWidth * scale)), height: Math.max(1, Math.round(phoneHeight * scale)), scale };
}

/** Scales and encodes the phone's PNG (its header's width and height as the relay read them); refuses a bad one. */
export async function screenImage(
  png: Buffer,
  phone: { width: number; height: number },
  req: ScreenRequest,
): Promise<{ data: Buffer; meta: ScreenImage }> {
  const { width: pw, height: ph } = phone;
  if (!(pw > 0 && ph > 0) || pw > MAX_PHONE_SIDE || ph > MAX_PHONE_SIDE || pw * ph > MAX_PHONE_PIXELS)
    throw badImage(
      `the phone's screenshot claims ${pw}x${ph} px; the relay decodes at most ${MAX_PHONE_SIDE} px a side and ${MAX_PHONE_PIXELS} pixels`,
    );
  const out = fitInside(pw, ph, req.maxSide);
  let data: Buffer;
  let info: Sharp.OutputInfo;
  try {
    const img = sharp()(png, { limitInputPixels: MAX_PHONE_PIXELS, failOn: 'error' })
      .removeAlpha()
      .resize(out.width, out.height, { fit: 'fill', kernel: 'lanczos3' });
    const encoded =
      req.format === 'jpeg'
        ? img.jpeg({ quality: req.quality, mozjpeg: false })
        : req.format === 'webp'
          ? img.webp({ quality: req.quality })
          : // PNG is lossless: quality has no meaning there, so the smallest palette-free encoding at the default effort.
            img.png({ compressionLevel: 6 });
    ({ data, info } = await encoded.toBuffer({ resolveWithObject: true }));
  } catch (err) {
    throw badImage(`the phone's screenshot could not be decoded: ${(err as Error).message}`);
  }
  // A PNG whose header says one size and whose data decodes to another is not the screen the agent will point at.
  if (info.width !== out.width || info.height !== out.height) throw badImage('the phone’s screenshot decoded to another size than its header says');
  return {
    data,
    meta: { width: out.width, height: out.height, phone_width: pw, phone_height: ph, scale: out.scale, format: req.format, bytes: data.length },
  };
}

function badImage(message: string): DomainError {
  return new DomainError('mcp.bad_screenshot', 'upstream', message);
}
