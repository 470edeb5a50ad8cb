import sharp from 'sharp';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startRelay, type TestRelay } from '../support/harness';
import { startSim } from '../support/bridge';
import { mcpConnect, textOf } from '../support/mcp';
import { encodeRgbPng } from '../../apps/phone-sim/src/png';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/**
 * Screens an agent can use (issue 40, item 1), with the SDK's client over Streamable HTTP: a 1440x3120 phone's
 * screenshot comes back with its long side at 2000 px, as JPEG, WebP or PNG, each decoded here by sharp; a tap
 * in that image's pixels reaches the phone in its own; a hostile phone's image is a tool error, never a crash.
 */
describe('MCP screenshots an agent can use', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  let client: Client;
  const SCALE = 2000 / 3120;
  beforeAll(async () => {
    relay = await startRelay();
    phone = await startSim(relay, { mode: 'app', deviceName: 'Big Phone', screen: { width: 1440, height: 3120 } });
    ({ client } = await mcpConnect(relay, phone.token!));
  });
  afterAll(async () => {
    await client.close();
    phone.stop();
    await relay.close();
  });

  const shot = async (args: Record<string, unknown> = {}) => {
    const r = (await client.callTool({ name: 'android_screenshot', arguments: args })) as CallToolResult;
    const image = r.content.find((c) => c.type === 'image') as { data: string; mimeType: string } | undefined;
    const bytes = image ? Buffer.from(image.data, 'base64') : Buffer.alloc(0);
    return { r, image, bytes, decoded: image ? await sharp(bytes).metadata() : null };
  };
  /** The body of the newest command the phone received on this path. */
  const lastSent = (s: PhoneSim, path: string) =>
    s.received.filter((f) => f.type === 'bridge.command' && f.payload.path === path).at(-1)?.payload.body as Record<string, unknown> | undefined;

  it('scales a 1440x3120 screen to a long side of 2000 px as JPEG by default, and says the scale', async () => {
    const { r, image, bytes, decoded } = await shot();
    expect(r.isError).toBeFalsy();
    expect(image!.mimeType).toBe('image/jpeg');
    expect(decoded).toMatchObject({ format: 'jpeg', width: 923, height: 2000 });
    expect(r.structuredContent).toEqual({
      width: 923,
      height: 2000,
      phone_width: 1440,
      phone_height: 3120,
      scale: SCALE,
      format: 'jpeg',
      bytes: bytes.length,
      token: expect.any(String),
      expires_at: expect.any(Number),
    });
    expect(JSON.parse(textOf(r))).toEqual(r.structuredContent);
  });

  it('takes max_side, format and quality per call: WebP and PNG decode as such, a lower quality is smaller', async () => {
    const webp = await shot({ max_side: 1000, format: 'webp' });
    expect(webp.image!.mimeType).toBe('image/webp');
    expect(webp.decoded).toMatchObject({ format: 'webp', width: 462, height: 1000 });
    expect(webp.r.structuredContent).toMatchObject({ width: 462, height: 1000, scale: 1000 / 3120, format: 'webp' });
    const png = await shot({ max_side: 500, format: 'png' });
    expect(png.decoded).toMatchObject({ format: 'png', width: 231, height: 500 });
    // Larger than the phone: never enlarged.
    const full = await shot({ max_side: 4000 });
    expect(full.decoded).toMatchObject({ width: 1440, height: 3120 });
    expect(full.r.structuredContent).toMatchObject({ scale: 1 });
    const low = await shot({ quality: 10 });
    const high = await shot({ quality: 95 });
    expect(low.decoded).toMatchObject({ width: 923, height: 2000 });
    expect(low.bytes.length * 2).toBeLessThan(high.bytes.length);
    const bad = (await client.callTool({ name: 'android_screenshot', arguments: { quality: 0, format: 'gif' } })) as CallToolResult;
    expect(bad).toMatchObject({ isError: true, structuredContent: { code: 'validation_failed' } });
  });

  it('maps a tap, a long press, a swipe and a drag in the last screenshot’s pixels to the phone’s own', async () => {
    await shot(); // the session's last screenshot of this phone: 923x2000
    const map = (v: number) => Math.round(v / SCALE);
    const tap = (await client.callTool({ name: 'android_tap', arguments: { x: 461, y: 1999 } })) as CallToolResult;
    expect(tap.isError).toBeFalsy();
    expect(lastSent(phone, '/tap')).toMatchObject({ x: map(461), y: Math.min(3119, map(1999)) });
    await client.callTool({ name: 'android_long_press', arguments: { x: 100.4, y: 200 } });
    expect(lastSent(phone, '/long_press')).toMatchObject({ x: map(100.4), y: map(200) });
    await client.callTool({ name: 'android_swipe', arguments: { start_x: 10, start_y: 1500, end_x: 10, end_y: 300 } });
    expect(lastSent(phone, '/swipe')).toMatchObject({ start_x: map(10), start_y: map(1500), end_x: map(10), end_y: map(300) });
    await client.callTool({ name: 'android_drag', arguments: { start_x: 0, start_y: 0, end_x: 922, end_y: 1000 } });
    expect(lastSent(phone, '/drag')).toMatchObject({ start_x: 0, start_y: 0, end_x: map(922), end_y: map(1000) });
    // Phone pixels when the agent says so (bounds from android_read_screen are).
    await client.callTool({ name: 'android_tap', arguments: { x: 1400, y: 3000, coordinates: 'phone' } });
    expect(lastSent(phone, '/tap')).toEqual(expect.objectContaining({ x: 1400, y: 3000 }));
    expect(lastSent(phone, '/tap')).not.toHaveProperty('coordinates');
  });

  it('refuses a point outside the image before anything reaches the phone', async () => {
    await shot();
    const before = phone.received.length;
    const r = (await client.callTool({ name: 'android_tap', arguments: { x: 923, y: 10 } })) as CallToolResult;
    expect(r).toMatchObject({ isError: true, structuredContent: { code: 'mcp.outside_image' } });
    expect(textOf(r)).toContain('outside the last screenshot (923x2000)');
    expect(phone.received.length).toBe(before);
  });

  it('a hostile phone’s image (a header claiming 20000x20000, a PNG whose data is garbage) is a tool error with a code', async () => {
    const evil = await startSim(relay, { deviceName: 'Evil Phone' });
    try {
      const header = encodeRgbPng(2, 2, Buffer.alloc(2 * 7));
      const huge = Buffer.from(header);
      huge.writeUInt32BE(20_000, 16);
      huge.writeUInt32BE(20_000, 20);
      const garbage = Buffer.concat([header.subarray(0, 33), Buffer.from('IDAT but not zlib at all, just words'.repeat(50))]);
      const answer = (png: Buffer) => () => ({ status: 200, result: { png_base64: png.toString('base64') } });
      for (const [png, says] of [
        [huge, 'claims 20000x20000 px'],
        [garbage, 'could not be decoded'],
      ] as const) {
        evil.handlers['/screenshot'] = answer(png);
        const r = (await client.callTool({ name: 'android_screenshot', arguments: { device: 'Evil Phone' } })) as CallToolResult;
        expect(r).toMatchObject({ isError: true, structuredContent: { code: 'mcp.bad_screenshot' } });
        expect(textOf(r)).toContain(says);
      }
      // The relay is still there, and the good phone's screenshots still work.
      expect((await shot()).decoded).toMatchObject({ width: 923, height: 2000 });
    } finally {
      evil.stop();
    }
  });
});
