import { IsInt, IsObject, IsOptional, Max, Min } from '../common/http/validators';

export class ShortenDto {
  @IsOptional()
  @IsInt({ message: 'ttl_seconds must be a whole number of seconds' })
  @Min(0)
  @Max(315_360_000)
  ttl_seconds?: number;

  @IsOptional()
  @IsObject({ message: 'grants must be an object of channel -> duration or false' })
  grants?: Record<string, unknown>;
}
