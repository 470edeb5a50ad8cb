import { mediaTokenOf, WAIT_CAP_MS } from '@svc/domain';
import { IsNumber, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateBy } from '../common/http/validators';

/*
 * The checks Device Control bodies share (device-control*.dto.ts): coordinates are finite and on a screen,
 * durations bounded, package ids, phone numbers, node ids and media references in their one form each.
 */

/** An Android package id (`com.example.app`): the one form for a body's `package` and a phone's answer. */
export const PACKAGE_RE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$/;
export const MAX_PACKAGE_LENGTH = 255;

export const isPackageId = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_PACKAGE_LENGTH && PACKAGE_RE.test(v);

const PHONE_RE = /^(?=.*\d)[+0-9*#(). -]{1,32}$/;
export const MAX_COORD = 100_000;

/** Compose property decorators (class-validator's are plain functions). */
export const all =
  (...ds: PropertyDecorator[]): PropertyDecorator =>
  (t, k) => {
    for (const d of ds) d(t, k);
  };

export const Coord = (): PropertyDecorator =>
  all(IsNumber({ allowNaN: false, allowInfinity: false }, { message: '$property must be a finite number' }), Min(0), Max(MAX_COORD));
export const DurationMs = (max = 10_000): PropertyDecorator =>
  all(
    IsOptional(),
    IsNumber({ allowNaN: false, allowInfinity: false }, { message: '$property must be a finite number of milliseconds' }),
    Min(0),
    Max(max),
  );
export const Package = (): PropertyDecorator =>
  all(IsString(), MaxLength(MAX_PACKAGE_LENGTH), Matches(PACKAGE_RE, { message: '$property must be an Android package id like com.example.app' }));
export const PhoneNumber = (): PropertyDecorator =>
  all(IsString(), Matches(PHONE_RE, { message: '$property must be a phone number (digits, +, spaces, dashes, parentheses; at most 32 characters)' }));
export const NodeId = (): PropertyDecorator =>
  ValidateBy({
    name: 'isNodeId',
    validator: {
      validate: (v: unknown) =>
        (typeof v === 'string' && v.length >= 1 && v.length <= 128) || (typeof v === 'number' && Number.isInteger(v) && v >= 0),
      defaultMessage: (a) => `${a?.property} must be a node id (a string of 1-128 characters or a whole number)`,
    },
  });
export const SmallObject = (maxBytes: number): PropertyDecorator =>
  ValidateBy({
    name: 'smallObject',
    validator: {
      validate: (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && JSON.stringify(v).length <= maxBytes,
      defaultMessage: (a) => `${a?.property} must be an object of at most ${maxBytes} bytes as JSON`,
    },
  });
export const capWait = ({ value }: { value: unknown }): unknown =>
  typeof value === 'number' && Number.isFinite(value) && value > WAIT_CAP_MS ? WAIT_CAP_MS : value;
export const toBool = ({ value }: { value: unknown }): unknown =>
  value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;

export const MediaRef = (name: string): PropertyDecorator =>
  all(
    IsOptional(),
    IsString(),
    MaxLength(512),
    ValidateBy({
      name: 'isMediaRef',
      validator: {
        validate: (v: unknown) => typeof v === 'string' && mediaTokenOf(v) !== null,
        defaultMessage: () => `${name} must be a media token the relay issued, or MEDIA:svc-relay://<token> (MEDIA:hermes-relay://<token> too)`,
      },
    }),
  );
