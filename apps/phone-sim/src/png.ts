import * as zlib from 'node:zlib';

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/**
 * A valid RGB PNG shaped like a phone's screen, made without dependencies: a status bar, a gradient, and rows
 * of cards with lines of "text" in them (detail, so an encoder's quality changes its size as it would a real
 * screen's). `seed` shifts the colours, so each screen differs.
 */
export function makePng(width = 54, height = 96, seed = 0): Buffer {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  const bar = Math.max(6, Math.round(height / 40));
  const card = Math.max(16, Math.round(height / 12));
  const margin = Math.max(2, Math.round(width / 24));
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    raw[row] = 0;
    const inCardRow = y > bar && (y - bar) % card > card / 8;
    const lineY = (y - bar) % card;
    const textRow = inCardRow && lineY % 10 < 5 && lineY > card / 4;
    for (let x = 0; x < width; x++) {
      const i = row + 1 + x * 3;
      if (y < bar) {
        raw[i] = raw[i + 1] = raw[i + 2] = 30;
        continue;
      }
      const inCard = inCardRow && x >= margin && x < width - margin;
      const text = inCard && textRow && (x * 7 + y * 3 + seed) % 23 < 15;
      raw[i] = text ? 40 : inCard ? 245 : (40 + x * 3 + seed) & 0xff;
      raw[i + 1] = text ? 40 : inCard ? 245 : (80 + y * 2) & 0xff;
      raw[i + 2] = text ? 60 : inCard ? 250 : 200;
    }
  }
  return encodeRgbPng(width, height, raw);
}

/**
 * An RGB PNG from raw scanlines (each row: a filter byte, then width x 3 bytes), made without
 * dependencies. The phone simulator's screenshots and the tests' images both come from here.
 */
export function encodeRgbPng(width: number, height: number, raw: Buffer): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
