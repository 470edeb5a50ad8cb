import { DomainError, mediaTokenOf } from '@svc/domain';
import { decodePng } from './bridge-media';
import { isPackageId } from './device-control-validators';

/** A screenshot in a phone's answer: uploaded by the app itself (a relay media token), or inline PNG bytes. */
export type AnsweredScreenshot = { uploaded: string } | { png: { bytes: Buffer; width: number; height: number } };

/** A `bridge.response` read: the status and body to answer with, or why the answer is unusable (`bad_response`). */
export type BridgeResponse =
  { ok: true; status: number; body: Record<string, unknown>; screenshot: AnsweredScreenshot | null } | { ok: false; error: DomainError };

/**
 * The phone's answer to a command sent to `path`: `status` (200 when absent; an integer 200-599) and
 * `result` (an object as it is; any other value as `{value}`). A successful `/screenshot` carries the
 * image: the app uploads the PNG itself (POST /media/upload) and answers `{media: "MEDIA:hermes-relay://<token>"}`,
 * or (older apps) sends it inline.
 */
export function readBridgeResponse(path: string, payload: Record<string, unknown>): BridgeResponse {
  const status = payload.status === undefined ? 200 : payload.status;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599)
    return { ok: false, error: new DomainError('bridge.bad_response', 'upstream', 'the phone answered with an invalid status') };
  const raw = payload.result;
  const body: Record<string, unknown> =
    raw === undefined ? {} : typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : { value: raw };
  if (path !== '/screenshot' || status >= 300) return { ok: true, status, body, screenshot: null };
  const marker = typeof body.media === 'string' ? body.media : null;
  const uploaded = marker ? mediaTokenOf(marker) : null;
  if (marker && !uploaded) return { ok: false, error: new DomainError('bridge.bad_screenshot', 'upstream', 'the phone named no relay media token') };
  if (uploaded) return { ok: true, status, body, screenshot: { uploaded } };
  const png = decodePng(body);
  if (typeof png === 'string') return { ok: false, error: new DomainError('bridge.bad_screenshot', 'upstream', png) };
  return { ok: true, status, body, screenshot: { png } };
}

/** The foreground package an answer shows, if it shows one: `/current_app {package}`, `/screen {packageName}`. */
export function foregroundShown(path: string, body: Record<string, unknown>): string | null {
  const v = path === '/current_app' ? body.package : path === '/screen' ? body.packageName : undefined;
  return isPackageId(v) ? v : null;
}
