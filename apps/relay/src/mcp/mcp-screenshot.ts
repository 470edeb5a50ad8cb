import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DomainError } from '@svc/domain';
import type { ImageSpaces } from './image-space';
import { DEFAULT_QUALITY, mimeOf, screenImage, SCREEN_FORMATS, type ScreenFormat, type ScreenRequest } from './screen-image';

/*
 * android_screenshot's answer: the phone's PNG scaled and encoded for the agent (screen-image.ts) as image
 * content, and what the agent needs to point into it as structured content (SCREENSHOT_OUTPUT), also as text
 * for clients that show only text. The image's space is remembered for the session's gestures (image-space.ts).
 */

/** What the relay says about the media token (the full-size PNG), beside the image's own numbers. */
const TOKEN_FIELDS = ['token', 'expires_at'] as const;

/**
 * The tool's outputSchema. A refusal is a tool error whose structured content is the refusal's body (`ok: false`
 * and its code or the phone's words), and an SDK client checks that against the schema too: hence the two shapes.
 */
export const SCREENSHOT_OUTPUT = {
  type: 'object' as const,
  properties: {
    width: { type: 'integer', minimum: 1, description: 'the image’s width in pixels' },
    height: { type: 'integer', minimum: 1, description: 'the image’s height in pixels' },
    phone_width: { type: 'integer', minimum: 1, description: 'the phone’s screen width in pixels' },
    phone_height: { type: 'integer', minimum: 1, description: 'the phone’s screen height in pixels' },
    scale: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 1,
      description: 'image pixels per phone pixel: the phone’s point is (x / scale, y / scale)',
    },
    format: { type: 'string', enum: [...SCREEN_FORMATS] },
    bytes: { type: 'integer', minimum: 1, description: 'the encoded image’s size' },
    token: { type: 'string', description: 'relay media token of the full-size PNG' },
    expires_at: { type: 'number', description: 'when the token expires (epoch seconds)' },
    ok: { type: 'boolean' },
  },
  anyOf: [
    { required: ['width', 'height', 'phone_width', 'phone_height', 'scale', 'format', 'bytes', 'token'] },
    { required: ['ok'], properties: { ok: { const: false } } },
  ],
};

/** The call's choices, the relay's setting where the call names none. */
export function screenRequest(input: { max_side?: number; format?: ScreenFormat; quality?: number }, defaultMaxSide: number): ScreenRequest {
  return { maxSide: input.max_side ?? defaultMaxSide, format: input.format ?? 'jpeg', quality: input.quality ?? DEFAULT_QUALITY };
}

export async function screenshotResult(
  body: Record<string, unknown>,
  req: ScreenRequest,
  spaces: ImageSpaces,
  phone: string,
): Promise<CallToolResult> {
  const { image, width, height } = body;
  // bridge-media.ts answers every screenshot with the PNG it checked and the size its header gives.
  if (typeof image !== 'string' || typeof width !== 'number' || typeof height !== 'number')
    throw new DomainError('mcp.bad_screenshot', 'upstream', 'the phone answered the screenshot without an image');
  const { data, meta } = await screenImage(Buffer.from(image, 'base64'), { width, height }, req);
  spaces.remember(phone, meta);
  const structured: Record<string, unknown> = { ...meta };
  for (const k of TOKEN_FIELDS) if (body[k] !== undefined) structured[k] = body[k];
  return {
    content: [
      { type: 'image', data: data.toString('base64'), mimeType: mimeOf(req.format) },
      { type: 'text', text: JSON.stringify(structured) },
    ],
    structuredContent: structured,
  };
}
