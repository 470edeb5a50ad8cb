import { DIRECTIONS, MEDIA_ACTIONS, mediaTokenOf, PRESS_KEYS, WAIT_CAP_MS } from '@svc/domain';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from '../common/validators';

/*
 * Device Control bodies as host tools send them (WIRE.md). Everything is checked here, before anything
 * reaches the phone: coordinates are finite, texts are bounded, vocabularies are closed.
 */

const PACKAGE_RE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$/;
const PHONE_RE = /^(?=.*\d)[+0-9*#(). -]{1,32}$/;
const MAX_COORD = 100_000;

/** Compose property decorators (class-validator's are plain functions). */
const all =
  (...ds: PropertyDecorator[]): PropertyDecorator =>
  (t, k) => {
    for (const d of ds) d(t, k);
  };

const Coord = (): PropertyDecorator =>
  all(IsNumber({ allowNaN: false, allowInfinity: false }, { message: '$property must be a finite number' }), Min(0), Max(MAX_COORD));
const DurationMs = (max = 10_000): PropertyDecorator =>
  all(
    IsOptional(),
    IsNumber({ allowNaN: false, allowInfinity: false }, { message: '$property must be a finite number of milliseconds' }),
    Min(0),
    Max(max),
  );
const Package = (): PropertyDecorator =>
  all(IsString(), MaxLength(255), Matches(PACKAGE_RE, { message: '$property must be an Android package id like com.example.app' }));
const PhoneNumber = (): PropertyDecorator =>
  all(IsString(), Matches(PHONE_RE, { message: '$property must be a phone number (digits, +, spaces, dashes, parentheses; at most 32 characters)' }));
const NodeId = (): PropertyDecorator =>
  ValidateBy({
    name: 'isNodeId',
    validator: {
      validate: (v: unknown) =>
        (typeof v === 'string' && v.length >= 1 && v.length <= 128) || (typeof v === 'number' && Number.isInteger(v) && v >= 0),
      defaultMessage: (a) => `${a?.property} must be a node id (a string of 1-128 characters or a whole number)`,
    },
  });
const SmallObject = (maxBytes: number): PropertyDecorator =>
  ValidateBy({
    name: 'smallObject',
    validator: {
      validate: (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && JSON.stringify(v).length <= maxBytes,
      defaultMessage: (a) => `${a?.property} must be an object of at most ${maxBytes} bytes as JSON`,
    },
  });
const capWait = ({ value }: { value: unknown }): unknown =>
  typeof value === 'number' && Number.isFinite(value) && value > WAIT_CAP_MS ? WAIT_CAP_MS : value;
const toBool = ({ value }: { value: unknown }): unknown =>
  value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;

/** `device` / `device_id` pick the phone; the relay removes them before forwarding. */
export class SelectorBody {
  @IsOptional()
  @IsString()
  @Length(1, 128)
  device?: string;

  @IsOptional()
  @IsString()
  @Length(1, 128)
  device_id?: string;
}

export class SelectorQuery extends SelectorBody {}

export class ScreenQuery extends SelectorQuery {
  @IsOptional()
  @Transform(toBool)
  @IsBoolean({ message: 'include_bounds must be true or false' })
  include_bounds?: boolean;
}

export class EventsQuery extends SelectorQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(500)
  limit?: number;

  @IsOptional()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'since must be a number' })
  @Min(0)
  since?: number;
}

export class TapDto extends SelectorBody {
  @IsOptional()
  @NodeId()
  nodeId?: string | number;

  @ValidateIf((o: TapDto) => o.nodeId === undefined)
  @Coord()
  x?: number;

  @ValidateIf((o: TapDto) => o.nodeId === undefined)
  @Coord()
  y?: number;

  @DurationMs()
  duration_ms?: number;

  /** Optional text hint (what the host believes it is tapping): read by the destructive-verb gate. */
  @IsOptional()
  @IsString()
  @MaxLength(500)
  text?: string;

  @IsOptional()
  @IsString()
  @MaxLength(500)
  hint?: string;
}

export class TapTextDto extends SelectorBody {
  @IsString()
  @Length(1, 500)
  text!: string;

  @IsOptional()
  @IsBoolean()
  exact?: boolean;
}

export class LongPressDto extends SelectorBody {
  @IsOptional()
  @NodeId()
  node_id?: string | number;

  @IsOptional()
  @NodeId()
  nodeId?: string | number;

  @ValidateIf((o: LongPressDto) => o.node_id === undefined && o.nodeId === undefined)
  @Coord()
  x?: number;

  @ValidateIf((o: LongPressDto) => o.node_id === undefined && o.nodeId === undefined)
  @Coord()
  y?: number;

  @DurationMs()
  duration?: number;

  @DurationMs()
  duration_ms?: number;
}

export class DragDto extends SelectorBody {
  @Coord() start_x!: number;
  @Coord() start_y!: number;
  @Coord() end_x!: number;
  @Coord() end_y!: number;
  @DurationMs()
  duration_ms?: number;
}

export class TypeDto extends SelectorBody {
  @IsString()
  @MaxLength(10_000)
  text!: string;

  @IsOptional()
  @IsBoolean()
  clearFirst?: boolean;
}

export class SwipeDto extends SelectorBody {
  @ValidateIf((o: SwipeDto) => o.start_x === undefined && o.start_y === undefined && o.end_x === undefined && o.end_y === undefined)
  @IsIn(DIRECTIONS, { message: `direction must be one of ${DIRECTIONS.join(', ')} (or give start_x, start_y, end_x, end_y)` })
  direction?: string;

  @IsOptional()
  @ValidateBy({
    name: 'isDistance',
    validator: {
      validate: (v: unknown) =>
        (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_COORD) || v === 'short' || v === 'medium' || v === 'long',
      defaultMessage: () => 'distance must be a finite number of pixels or short, medium, long',
    },
  })
  distance?: number | string;

  @ValidateIf((o: SwipeDto) => o.direction === undefined) @Coord() start_x?: number;
  @ValidateIf((o: SwipeDto) => o.direction === undefined) @Coord() start_y?: number;
  @ValidateIf((o: SwipeDto) => o.direction === undefined) @Coord() end_x?: number;
  @ValidateIf((o: SwipeDto) => o.direction === undefined) @Coord() end_y?: number;
  @DurationMs()
  duration_ms?: number;
}

export class ScrollDto extends SelectorBody {
  @IsIn([...DIRECTIONS, 'forward', 'backward'], { message: 'direction must be one of up, down, left, right, forward, backward' })
  direction!: string;

  @IsOptional()
  @NodeId()
  nodeId?: string | number;
}

export class PressKeyDto extends SelectorBody {
  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @IsIn(PRESS_KEYS, { message: `key must be a global action: ${PRESS_KEYS.join(', ')} (raw key events are not offered)` })
  key!: string;
}

export class WaitDto extends SelectorBody {
  /** Capped, not refused: a longer wait becomes 15 s (spec 8). android_tool.py sends `timeoutMs`. */
  @ValidateIf((o: WaitDto) => o.ms === undefined)
  @Transform(capWait)
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'timeoutMs must be a finite number of milliseconds' })
  @Min(0)
  @Max(WAIT_CAP_MS)
  timeoutMs?: number;

  /** The app's own name for it (its `/wait` sleeps `ms`); either is accepted. */
  @IsOptional()
  @Transform(capWait)
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'ms must be a finite number of milliseconds' })
  @Min(0)
  @Max(WAIT_CAP_MS)
  ms?: number;

  @IsOptional()
  @IsString()
  @MaxLength(500)
  text?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  className?: string;
}

export class OpenAppDto extends SelectorBody {
  @Package()
  package!: string;
}

export class FindNodesDto extends SelectorBody {
  @IsOptional()
  @IsString()
  @MaxLength(500)
  text?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  class_name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(256)
  resource_id?: string;

  @IsOptional()
  @IsBoolean()
  clickable?: boolean;

  /** android_tool.py sends `limit` (default 20); the app caps it at its walk budget. */
  @IsOptional()
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(512)
  limit?: number;
}

export class DescribeNodeDto extends SelectorBody {
  @NodeId()
  nodeId!: string | number;
}

export class DiffScreenDto extends SelectorBody {
  @IsString()
  @Matches(/^[A-Fa-f0-9]{8,128}$/, { message: 'previous_hash must be the hex hash /screen_hash returned' })
  previous_hash!: string;
}

export class ClipboardSetDto extends SelectorBody {
  @IsString()
  @MaxLength(100_000)
  text!: string;
}

export class MediaDto extends SelectorBody {
  @IsIn(MEDIA_ACTIONS, { message: `action must be one of ${MEDIA_ACTIONS.join(', ')}` })
  action!: string;
}

export class BroadcastDto extends SelectorBody {
  @IsString()
  @Length(1, 256)
  @Matches(/^[A-Za-z0-9_.$-]+$/, { message: 'action must be an intent action like android.intent.action.VIEW' })
  action!: string;

  @IsOptional()
  @IsString()
  @MaxLength(2048)
  data?: string;

  @IsOptional()
  @Package()
  package?: string;

  @IsOptional()
  @SmallObject(16_384)
  extras?: Record<string, unknown>;
}

export class SendIntentDto extends BroadcastDto {
  @IsOptional()
  @IsString()
  @MaxLength(512)
  @Matches(/^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+\/[A-Za-z0-9_.$]+$/, { message: 'component must be package/class' })
  component?: string;

  @IsOptional()
  @IsString()
  @MaxLength(256)
  category?: string;
}

export class EventsStreamDto extends SelectorBody {
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled!: boolean;
}

export class SearchContactsDto extends SelectorBody {
  @IsString()
  @Length(1, 100)
  query!: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(50)
  limit?: number;
}

export class CallDto extends SelectorBody {
  @PhoneNumber()
  number!: string;
}

export class SendSmsDto extends SelectorBody {
  @PhoneNumber()
  to!: string;

  @IsString()
  @Length(1, 2000)
  body!: string;
}

const MediaRef = (name: string): PropertyDecorator =>
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

/**
 * One attachment: a relay media token (`media` marker as android_tool.py sends it, `media_token`, or
 * `token`) or a host `path` (registered before forwarding), with an optional content type and name.
 */
export class AttachmentDto {
  @MediaRef('media')
  media?: string;

  @MediaRef('media_token')
  media_token?: string;

  @MediaRef('token')
  token?: string;

  @ValidateIf((o: AttachmentDto) => o.path !== undefined || [o.media, o.media_token, o.token].every((v) => v === undefined))
  @IsString({ message: 'an attachment needs media (MEDIA:svc-relay://<token>), media_token or path' })
  @MaxLength(4096)
  @Matches(/^\//, { message: 'path must be absolute' })
  @ValidateBy({
    name: 'notBoth',
    validator: {
      validate: (_v: unknown, a) => {
        const o = a?.object as AttachmentDto;
        return o.media === undefined && o.media_token === undefined && o.token === undefined;
      },
      defaultMessage: () => 'give a media token or a path, not both',
    },
  })
  path?: string;

  @IsOptional()
  @IsString()
  @MaxLength(128)
  content_type?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  file_name?: string;
}

export class ShareMediaDto extends SelectorBody {
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateNested({ each: true })
  @Type(() => AttachmentDto)
  attachments?: AttachmentDto[];

  @ValidateIf((o: ShareMediaDto) => !o.attachments || o.attachments.length === 0)
  @IsString({ message: 'give text or at least one attachment' })
  @Length(1, 10_000)
  text?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;

  @IsOptional()
  @Package()
  package?: string;
}

export class SendMmsDto extends SelectorBody {
  @PhoneNumber()
  to!: string;

  /** android_tool.py sends `body: ""` when there are attachments only. */
  @IsString()
  @MaxLength(5000)
  @ValidateBy({
    name: 'bodyOrAttachment',
    validator: {
      validate: (v: unknown, a) => (typeof v === 'string' && v.trim() !== '') || ((a?.object as SendMmsDto).attachments?.length ?? 0) > 0,
      defaultMessage: () => 'give at least one attachment or a body',
    },
  })
  body!: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateNested({ each: true })
  @Type(() => AttachmentDto)
  attachments?: AttachmentDto[];

  @IsOptional()
  @Package()
  package?: string;
}

/** `device` (device id, token prefix or name) or `device_id`. */
export class SelectActiveDto {
  @ValidateIf((o: SelectActiveDto) => o.device_id === undefined)
  @IsString({ message: 'give device (device id, token prefix or name) or device_id' })
  @Length(1, 128)
  device?: string;

  @IsOptional()
  @IsString()
  @Length(1, 128)
  device_id?: string;
}
