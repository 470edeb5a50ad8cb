import { DomainError, isSecretKey } from '@svc/domain';
import { HOST_KEY_OWNER, parsePersonalKeyId, type ForgetScope, type NewEvent, type PersonalDataForgotten } from '@svc/events';

const DEVICE_RE = /^[A-Za-z0-9_-]{4,64}$/;

export type ForgetRequest = { scope: ForgetScope; device: string | null; before: Date | null };

/** A device prefix as `forget --device` takes it: a token prefix (at least 4 characters) or `host`. */
export function checkDevice(device: string): string {
  if (device !== HOST_KEY_OWNER && !DEVICE_RE.test(device))
    throw new DomainError(
      'personal.bad_device',
      'invalid',
      `a device is a token prefix of at least 4 letters, digits, - or _ (or "${HOST_KEY_OWNER}")`,
    );
  return device;
}

/** An ISO time as `forget --before` takes it. */
export function checkBefore(text: string): Date {
  const ms = text.length <= 40 && /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(ms))
    throw new DomainError('personal.bad_time', 'invalid', 'before is an ISO 8601 time, e.g. 2026-11-01 or 2026-11-01T12:00:00Z');
  return new Date(ms);
}

/** Which devices received content under a key not their own (the personal-data read model). */
export type Receivers = { receivers(key: string): readonly string[] };

/**
 * The keys a forgetting destroys: a device's (its token prefix starts with `device`) and the keys of what
 * it received that were not its own (a Thread message queued under the host's key, then delivered to it),
 * or every key of an hour that began before `before` (keys are per hour: content up to the end of that
 * hour goes too), or both.
 */
export function keysToForget(ids: readonly string[], req: ForgetRequest, received: Receivers): string[] {
  const scope = { device: req.device, before: req.before?.getTime() ?? null };
  return ids
    .filter((id) => {
      const k = parsePersonalKeyId(id);
      // A named secret's keys go only when the operator forgets that secret (svc relay secrets forget).
      if (!k || isSecretKey(id)) return false;
      if (forgetReaches(scope, k.device, k.hourStart)) return true;
      return scope.device !== null && received.receivers(id).some((d) => forgetReaches(scope, d, k.hourStart));
    })
    .sort();
}

/**
 * Whether a forgetting (a device prefix, a time, or both) reaches content of `device` from the hour that
 * began at `hourStart` (epoch ms): the rule for each key, and for a recording written before recordings
 * were sealed (its shell's device, the hour it started).
 */
export function forgetReaches(scope: { device: string | null; before: number | null }, device: string, hourStart: number): boolean {
  if (scope.device === null && scope.before === null) return false;
  if (scope.device !== null && !device.startsWith(scope.device)) return false;
  return scope.before === null || hourStart < scope.before;
}

/** The forgetting's event (none when there is nothing to forget). */
export function forgetEvents(ids: readonly string[], req: ForgetRequest, received: Receivers): NewEvent<PersonalDataForgotten>[] {
  if (req.device === null && req.before === null)
    throw new DomainError('personal.no_scope', 'invalid', 'say what to forget: a device, a time, or both');
  const keys = keysToForget(ids, req, received);
  if (keys.length === 0) return [];
  return [{ type: 'personal.forgotten', data: { scope: req.scope, device: req.device, before: req.before?.toISOString() ?? null, keys } }];
}

/** The start of retention: keys of hours that ended before `now - days` go (0 days: keep). */
export function retentionCutoff(now: Date, days: number): Date | null {
  if (days <= 0) return null;
  return new Date(now.getTime() - days * 86_400_000 - 3_600_000);
}
