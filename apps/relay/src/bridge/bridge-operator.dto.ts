import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Length, Max, Min, ValidateIf } from '../common/http/validators';

/** `GET /bridge/activity[?limit=]`: how many commands and safety decisions, newest first. */
export class ActivityQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;
}

/** `POST /bridge/select-active`: `device` (device id, token prefix or name) or `device_id`. */
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
