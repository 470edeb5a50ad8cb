import { ERROR_CODE_PATTERN, ID_PATTERN, IMAGE_ACTIVITY_STATUSES } from '@svc/domain';
import type { ImageActivityStatus } from '@svc/events';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from '../common/validators';

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
