import { encodeRgbPng } from '../../apps/phone-sim/src/png';

/** A real, decodable RGB PNG of one colour (tests that need an image a browser can render). */
export function solidPng(width: number, height: number, rgb: [number, number, number] = [40, 120, 200]): Buffer {
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  return encodeRgbPng(width, height, Buffer.concat(Array.from({ length: height }, () => row)));
}
