import { DIRECTIONS, PRESS_KEYS, WAIT_CAP_MS } from '@svc/domain';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsNumber, IsOptional, IsString, Length, Max, MaxLength, Min, ValidateBy, ValidateIf } from '../common/http/validators';
import { SelectorBody } from './device-control.dto';
import { capWait, Coord, DurationMs, MAX_COORD, NodeId } from './device-control-validators';

/* Gestures and input on the phone's screen (WIRE.md): coordinates are finite, texts bounded, keys a closed set. */

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

  /** Optional text hint (what is pressed), as /tap's: read by the destructive-verb gate. */
  @IsOptional()
  @IsString()
  @MaxLength(500)
  text?: string;
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
