import type { Type } from '@nestjs/common';
import { IsIn, IsInt, IsOptional, Max, Min, ValidateIf } from '../common/http/validators';
import { SelectorQuery } from '../bridge/device-control.dto';
import { DragDto, LongPressDto, SwipeDto, TapDto, TypeDto } from '../bridge/device-control-gestures.dto';
import { QueryField, RefField, UiTreeInput, WaitForInput, type ElementQueryInput } from './mcp-element-inputs.dto';
import { MAX_PHONE_SIDE, MIN_MAX_SIDE, SCREEN_FORMATS, type ScreenFormat } from './screen-image';

/*
 * What an MCP tool takes beyond its route's DTO (issue 40, item 1): how a screenshot is scaled and encoded,
 * and in which space a gesture's coordinates are. These are the relay's to act on, never the phone's: the
 * tool call strips them (MCP_ONLY) before the route's input goes on, so the HTTP routes neither take nor see them.
 */

export const COORDINATE_SPACES = ['screenshot', 'phone'] as const;
export type CoordinateSpace = (typeof COORDINATE_SPACES)[number];

export class ScreenshotToolInput extends SelectorQuery {
  @IsOptional()
  @IsInt({ message: 'max_side must be a whole number of pixels' })
  @Min(MIN_MAX_SIDE)
  @Max(MAX_PHONE_SIDE)
  max_side?: number;

  @IsOptional()
  @IsIn(SCREEN_FORMATS, { message: `format must be one of ${SCREEN_FORMATS.join(', ')}` })
  format?: ScreenFormat;

  @IsOptional()
  @IsInt({ message: 'quality must be a whole number from 1 to 100' })
  @Min(1)
  @Max(100)
  quality?: number;
}

/** A gesture DTO with `coordinates`: `screenshot` (the default) or `phone` pixels. */
function withSpace<T extends Type<object>>(Base: T, name: string): T {
  class WithSpace extends Base {
    @IsOptional()
    @IsIn(COORDINATE_SPACES, { message: `coordinates must be one of ${COORDINATE_SPACES.join(', ')}` })
    coordinates?: CoordinateSpace;
  }
  Object.defineProperty(WithSpace, 'name', { value: name });
  return WithSpace;
}

/** No ref or query: then the route's own x/y rule applies (both conditions must hold for x and y to be checked). */
const noTarget = (o: { ref?: unknown; query?: unknown }) => o.ref === undefined && o.query === undefined;

/** A gesture that may also name its element by `ref` or `query` (issue 40, item 2; mcp-elements.ts). */
function withSpaceAndTarget<T extends Type<object>>(Base: T, name: string): T {
  class WithTarget extends withSpace(Base, name) {
    @RefField()
    ref?: string;

    @QueryField()
    query?: ElementQueryInput;

    @ValidateIf(noTarget)
    x?: number;

    @ValidateIf(noTarget)
    y?: number;
  }
  Object.defineProperty(WithTarget, 'name', { value: name });
  return WithTarget;
}

export const TapToolInput = withSpaceAndTarget(TapDto, 'TapToolInput');
export const LongPressToolInput = withSpaceAndTarget(LongPressDto, 'LongPressToolInput');

export class TypeToolInput extends TypeDto {
  @RefField()
  ref?: string;

  @QueryField()
  query?: ElementQueryInput;
}
export const DragToolInput = withSpace(DragDto, 'DragToolInput');
export const SwipeToolInput = withSpace(SwipeDto, 'SwipeToolInput');

/** The gestures whose coordinates are in a screenshot's space (image-space.ts), by tool route. */
const GESTURE_INPUTS: Readonly<Record<string, Type<object>>> = {
  'POST /tap': TapToolInput,
  'POST /long_press': LongPressToolInput,
  'POST /drag': DragToolInput,
  'POST /swipe': SwipeToolInput,
};

export const isGesture = (method: string, path: string): boolean => `${method} ${path}` in GESTURE_INPUTS;

/** The tool inputs that differ from their route's DTO, by tool route. */
export const TOOL_INPUTS: Readonly<Record<string, Type<object>>> = {
  'GET /screenshot': ScreenshotToolInput,
  'POST /type': TypeToolInput,
  ...GESTURE_INPUTS,
};

/** The inputs of tools that share their route with another tool (android_ui_tree and android_wait_for read `/screen`), by name. */
export const NAMED_INPUTS: Readonly<Record<string, Type<object>>> = { android_ui_tree: UiTreeInput, android_wait_for: WaitForInput };

/** The fields above: the relay's, taken off before the input goes to the phone. */
export const MCP_ONLY = ['max_side', 'format', 'quality', 'coordinates', 'ref', 'query'] as const;
