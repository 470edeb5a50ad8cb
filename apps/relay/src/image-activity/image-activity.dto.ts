import { ERROR_CODE_PATTERN, ID_PATTERN, IMAGE_ACTIVITY_STATUSES } from '@svc/domain';
import type { ImageActivityStatus } from '@svc/events';
import { Check, coded } from '../common/http/dto-refusals';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from '../common/http/validators';

/**
 * The host platform's report of one image-generation step. Only these fields exist: anything else the
 * platform sends (a prompt, text, a tool result) is stripped by the whitelist before it reaches a rule.
 */
export class ReportDto {
  @IsString()
  @Matches(ID_PATTERN, { message: 'session_id: 1-128 characters of A-Z a-z 0-9 _ . : -' })
  session_id!: string;

  @IsString()
  @Matches(ID_PATTERN, { message: 'call_id: 1-128 characters of A-Z a-z 0-9 _ . : -' })
  call_id!: string;

  @IsIn(IMAGE_ACTIVITY_STATUSES as ImageActivityStatus[], { message: `status must be one of ${IMAGE_ACTIVITY_STATUSES.join(', ')}` })
  status!: ImageActivityStatus;

  /** Percent, with status `progress`. */
  @IsOptional()
  @IsInt({ message: 'progress must be a whole percent' })
  @Min(0)
  @Max(100)
  progress?: number | null;

  /** A machine code (never a message), with status `failed`. */
  @IsOptional()
  @IsString()
  @Matches(ERROR_CODE_PATTERN, { message: 'error_code: 1-64 of a-z 0-9 _ . - (a code, not a message)' })
  error_code?: string | null;
}

/** What the phone may name as a session: any 1-256 printable characters (an id the relay never saw answers empty). */
const SESSION_ID = /^[^\x00-\x1f\x7f]{1,256}$/;
/** A profile name, echoed back: printable, bounded. */
const PROFILE = /^[^\x00-\x1f\x7f]{1,128}$/;
/**
 * Epoch seconds as the app writes them: Kotlin's `Double.toString` (`1.7E9`, `1.7631234567891E9`), a plain
 * decimal (`1763123456.789`) or an integer.
 */
const SECONDS = /^\+?(\d{1,20}(\.\d{0,20})?|\.\d{1,20})([eE][+-]?\d{1,3})?$/;

/** `since` as epoch milliseconds (a value ActivityQuery passed; absent or empty: null). */
export function sinceMsOf(since: string | undefined): number | null {
  return since === undefined || since === '' ? null : Number(since.trim()) * 1000;
}

const absent = (v: unknown): boolean => v === undefined || v === '';

/**
 * `GET /chat/image-activity?session_id=&since=&profile=`. Values are checked trimmed and kept as sent; the
 * service trims them. The app polls with every shape it may hold, so only what cannot be read is refused.
 */
export class ActivityQuery {
  @Check(
    'sessionId',
    (v) => typeof v === 'string' && SESSION_ID.test(v.trim()),
    coded('image_activity.bad_session_id', 'session_id is required: 1-256 printable characters'),
  )
  session_id!: string;

  /** Absent or empty: `default`. */
  @Check(
    'profile',
    (v) => absent(v) || (typeof v === 'string' && PROFILE.test(v.trim())),
    coded('image_activity.bad_profile', 'profile: 1-128 printable characters'),
  )
  profile?: string;

  /** Epoch seconds, fractions and exponent form allowed; absent or empty: from the start. */
  @Check(
    'epochSeconds',
    (v) => {
      if (absent(v)) return true;
      const raw = typeof v === 'string' ? v.trim() : '';
      const n = SECONDS.test(raw) ? Number(raw) : NaN;
      return Number.isFinite(n) && n * 1000 <= 8.64e15;
    },
    coded('image_activity.bad_since', 'since must be epoch seconds (a non-negative number, e.g. 1.7E9)'),
  )
  since?: string;
}
