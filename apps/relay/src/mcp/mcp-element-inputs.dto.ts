import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from '../common/http/validators';
import { SelectorBody, SelectorQuery } from '../bridge/device-control.dto';
import { WAIT_CEILING_MS } from './element-limits';
import { MAX_PHONE_NODES, REF_PATTERN, ROLES, type Role } from './element-tree';

/*
 * What the element tools take (issue 40, item 2): a ref from android_ui_tree, or a query by text and role.
 * The relay acts on these and never forwards them (mcp-elements.ts resolves them into the phone's node).
 */

export class ElementQueryInput {
  @ValidateIf((o: ElementQueryInput) => o.role === undefined)
  @IsString({ message: 'query needs text or role' })
  @Length(1, 500, { message: 'query.text must be 1-500 characters' })
  text?: string;

  @IsOptional()
  @IsIn(ROLES, { message: `query.role must be one of ${ROLES.join(', ')}` })
  role?: Role;

  /** True: the whole label, not a part of it (case-insensitive either way). */
  @IsOptional()
  @IsBoolean()
  exact?: boolean;
}

/** `ref` (checked by its shape before any lookup: bounded, one fixed pattern) and `query`. */
export function RefField(): PropertyDecorator {
  return (target, key) => {
    IsOptional()(target, key);
    IsString()(target, key);
    MaxLength(16, { message: 'ref must be a ref from android_ui_tree (e and 8 letters or digits)' })(target, key);
    Matches(REF_PATTERN, { message: 'ref must be a ref from android_ui_tree (e and 8 letters or digits)' })(target, key);
  };
}

export function QueryField(): PropertyDecorator {
  return (target, key) => {
    IsOptional()(target, key);
    IsObject({ message: 'query must be an object {text, role, exact}' })(target, key);
    ValidateNested()(target, key);
    Type(() => ElementQueryInput)(target, key);
  };
}

export class UiTreeInput extends SelectorQuery {
  @IsOptional()
  @IsInt({ message: 'max_elements must be a whole number' })
  @Min(1)
  @Max(MAX_PHONE_NODES)
  max_elements?: number;
}

export class WaitForInput extends SelectorBody {
  @RefField()
  ref?: string;

  @QueryField()
  query?: ElementQueryInput;

  /** Short for query {text}. */
  @IsOptional()
  @IsString()
  @Length(1, 500, { message: 'text must be 1-500 characters' })
  text?: string;

  /** True: wait until no such element is on screen. */
  @IsOptional()
  @IsBoolean()
  gone?: boolean;

  @IsOptional()
  @IsInt({ message: 'timeout_ms must be a whole number of milliseconds' })
  @Min(1)
  @Max(WAIT_CEILING_MS)
  timeout_ms?: number;

  @IsOptional()
  @IsInt({ message: 'poll_ms must be a whole number of milliseconds' })
  @Min(50)
  @Max(10_000)
  poll_ms?: number;
}
