import { NOTIFICATIONS_KEPT } from '@svc/domain';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from '../common/http/validators';

export class RecentQueryDto {
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: `limit must be a whole number from 1 to ${NOTIFICATIONS_KEPT}` })
  @Min(1)
  @Max(NOTIFICATIONS_KEPT, { message: `limit: at most ${NOTIFICATIONS_KEPT}` })
  limit?: number;
}
