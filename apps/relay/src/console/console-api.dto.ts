import { Transform } from 'class-transformer';
import { Check, coded } from '../common/http/dto-refusals';
import { IsOptional, IsString } from '../common/http/validators';

const QUERY = 'validation.query';
/** A repeated parameter reads as its values joined (as the hand checks read it): never a valid number or time. */
const text = (v: unknown): unknown => (Array.isArray(v) ? String(v) : v);

/** A whole number as the query writes it (`/^\d{1,15}$/`), read as one; absent or empty: none; anything else stays to be refused. */
const toWhole = ({ value }: { value: unknown }): unknown => {
  const v = text(value);
  if (v === undefined || v === '') return undefined;
  return typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : v;
};

/** Epoch seconds (up to 12 digits) or an ISO time, read as epoch ms; absent or empty: none. */
const toTime = ({ value }: { value: unknown }): unknown => {
  const v = text(value);
  if (v === undefined || v === '' || typeof v !== 'string') return v === '' ? undefined : v;
  if (/^\d{1,12}$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? v : t;
};

/** `name` a whole number from `min` to `max` (each failure its own message, code `validation.query`). */
function WholeNumber(name: string, min: number, max = Number.MAX_SAFE_INTEGER): PropertyDecorator {
  return (target, key) => {
    Transform(toWhole)(target, key);
    Check('wholeNumber', (v) => v === undefined || typeof v === 'number', coded(QUERY, `${name} must be a whole number`))(target, key);
    Check('inRange', (v) => typeof v !== 'number' || (v >= min && v <= max), coded(QUERY, `${name} must be between ${min} and ${max}`))(target, key);
  };
}

function Time(name: string): PropertyDecorator {
  return (target, key) => {
    Transform(toTime)(target, key);
    Check('time', (v) => v === undefined || typeof v === 'number', coded(QUERY, `${name}: epoch seconds or an ISO time`))(target, key);
  };
}

/**
 * `GET /console/api/events`: `after=SEQ` (oldest first from there) or `before=SEQ` (newest first), `limit`,
 * and the filters `type` (comma list), `device`, `since`/`until` (epoch seconds or ISO, read as epoch ms).
 */
export class EventsPageQuery {
  @WholeNumber('limit', 1, 1000)
  limit?: number;

  @WholeNumber('after', 0)
  after?: number;

  @WholeNumber('before', 1)
  before?: number;

  @IsOptional()
  @IsString(coded(QUERY, 'type: a comma list of event types'))
  type?: string;

  @IsOptional()
  @IsString(coded(QUERY, 'device: a token prefix or device id'))
  device?: string;

  @Time('since')
  since?: number;

  @Time('until')
  until?: number;
}
