import { RefuseNonObject, RefuseUnknownKeys } from '../../common/http/dto-refusals';
import { IsOptional, IsString } from '../../common/http/validators';

/** The full check takes no options: `{}` (or no body); anything else is refused by name. */
@RefuseNonObject('store.bad_body', 'send {} (the check takes no options)', { noneIsEmpty: true })
@RefuseUnknownKeys('store.bad_body', (key) => `unknown field ${key.slice(0, 64)}: the check takes no options`)
export class StoreVerifyDto {
  // A DTO needs one rule for class-validator to know it (forbidUnknownValues); `{}` never sets this.
  @IsOptional()
  @IsString()
  private readonly _none?: string;
}

/** A checkpoint signs the current head and takes no options: `{}` (or no body). */
@RefuseNonObject('store.bad_body', 'send {} (a checkpoint takes no options)', { noneIsEmpty: true })
@RefuseUnknownKeys('store.bad_body', (key) => `unknown field ${key.slice(0, 64)}: a checkpoint takes no options`)
export class StoreCheckpointDto {
  @IsOptional()
  @IsString()
  private readonly _none?: string;
}
