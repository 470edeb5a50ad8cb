import { Transform, Type } from 'class-transformer';
import { Check, RefuseNonObject } from '../common/http/dto-refusals';
import { IsBoolean, IsInt, IsNumber, IsOptional, IsString, Length, Max, Min, ValidateIf } from '../common/http/validators';
import { toBool } from './device-control-validators';

/*
 * Device Control inputs as host tools send them (WIRE.md), checked before anything reaches the phone:
 * the selectors every route takes and the GET queries here; the bodies by kind in device-control-*.dto.ts.
 */

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

const selector = (v: unknown): boolean => v === undefined || (typeof v === 'string' && v.length >= 1 && v.length <= 128);

/**
 * The body of a POST that carries no data (`/setup`, `/return_to_svc`): the selectors, nothing else forwarded.
 * `ValidateIf` changes no outcome (`selector` passes undefined) but tells the generated schema they are optional.
 */
@RefuseNonObject('validation_failed', 'the body must be a JSON object', { noneIsEmpty: true })
export class SelectorOnlyBody {
  @ValidateIf((_o, v) => v !== undefined)
  @Check('selector', selector, { message: 'device must be a string of 1-128 characters' })
  device?: string;

  @ValidateIf((_o, v) => v !== undefined)
  @Check('selector', selector, { message: 'device_id must be a string of 1-128 characters' })
  device_id?: string;
}

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
