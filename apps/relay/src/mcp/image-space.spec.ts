import { DomainError } from '@svc/domain';
import { ImageSpaces } from './image-space';
import { fitInside } from './screen-image';

describe('a screenshot’s image space', () => {
  it('fits the long side into max_side, never enlarging', () => {
    expect(fitInside(1440, 3120, 2000)).toEqual({ width: 923, height: 2000, scale: 2000 / 3120 });
    expect(fitInside(3120, 1440, 2000)).toEqual({ width: 2000, height: 923, scale: 2000 / 3120 });
    expect(fitInside(1080, 2340, 4000)).toEqual({ width: 1080, height: 2340, scale: 1 });
  });

  it('maps points back by the scale, rounded and clamped to the screen; a point outside the image or not finite is refused', () => {
    const spaces = new ImageSpaces();
    const { width, height, scale } = fitInside(1440, 3120, 2000);
    spaces.remember('p1', { width, height, phone_width: 1440, phone_height: 3120, scale, format: 'jpeg', bytes: 1 });
    expect(spaces.toPhone('p1', { x: 461, y: 1999.9, duration_ms: 100 })).toEqual({ x: 719, y: 3119, duration_ms: 100 });
    expect(spaces.toPhone('p1', { start_x: 0, start_y: 0, end_x: 922, end_y: 10, distance: 100 })).toEqual({
      start_x: 0,
      start_y: 0,
      end_x: 1438,
      end_y: 16,
      distance: 156,
    });
    for (const bad of [
      { x: 923, y: 0 },
      { x: 0, y: 2000 },
      { x: -1, y: 0 },
      { x: Number.NaN, y: 0 },
      { x: Infinity, y: 0 },
      { x: '5', y: 0 },
    ])
      expect(() => spaces.toPhone('p1', bad)).toThrow(expect.objectContaining({ code: 'mcp.outside_image' }) as DomainError);
    // Another phone, or none screenshotted in the session: phone pixels as given.
    expect(spaces.toPhone('p2', { x: 5000, y: 1 })).toEqual({ x: 5000, y: 1 });
  });
});
