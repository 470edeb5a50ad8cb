import { DomainError } from '@svc/domain';
import type { ScreenImage } from './screen-image';

/*
 * Coordinates an agent sends in the image space of its last screenshot, mapped back to the phone's pixels
 * (issue 40, item 1: coordinates that do not line up with the image are a known way to miss). One MCP session
 * remembers, per phone, the last screenshot it was given; a gesture on that phone is read in that image's
 * space unless the call says `coordinates: "phone"` (bounds from android_read_screen are phone pixels). With
 * no screenshot yet in the session, coordinates are the phone's pixels, as over HTTP.
 */

/** The fields of each gesture that are a point's x or y, or a length along the screen. */
const X = ['x', 'start_x', 'end_x'] as const;
const Y = ['y', 'start_y', 'end_y'] as const;

type Space = Pick<ScreenImage, 'width' | 'height' | 'phone_width' | 'phone_height' | 'scale'>;

export class ImageSpaces {
  /** By the phone's token prefix; a session drives a handful of phones at most, each entry a few numbers. */
  private readonly last = new Map<string, Space>();

  remember(phone: string, image: ScreenImage): void {
    this.last.set(phone, {
      width: image.width,
      height: image.height,
      phone_width: image.phone_width,
      phone_height: image.phone_height,
      scale: image.scale,
    });
  }

  /** The last screenshot's space on this phone in this session, if any. */
  of(phone: string): Space | undefined {
    return this.last.get(phone);
  }

  /**
   * A gesture's input with its coordinates in the phone's pixels: each point checked to lie inside the image
   * (finite, 0 <= x < width, 0 <= y < height), then divided by the scale, rounded, and clamped to the screen.
   */
  toPhone(phone: string, input: Record<string, unknown>): Record<string, unknown> {
    const space = this.last.get(phone);
    if (!space || space.scale === 1) return input;
    const out = { ...input };
    const map = (key: string, size: number, phoneSize: number) => {
      const v = out[key];
      if (v === undefined) return;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v >= size)
        throw new DomainError(
          'mcp.outside_image',
          'invalid',
          `${key}=${String(v)} is outside the last screenshot (${space.width}x${space.height}): coordinates are in its image space, or give coordinates: "phone"`,
        );
      out[key] = Math.min(phoneSize - 1, Math.round(v / space.scale));
    };
    for (const k of X) map(k, space.width, space.phone_width);
    for (const k of Y) map(k, space.height, space.phone_height);
    // A swipe's distance in pixels is a length on the image too.
    if (typeof out.distance === 'number') out.distance = Math.round(out.distance / space.scale);
    return out;
  }
}
