import { coded } from '../common/http/dto-refusals';
import { IsBoolean, IsOptional, IsString, Matches, MaxLength } from '../common/http/validators';

/** `POST /console/api/personal-data/forget`: a device prefix, a time, or both. */
export class ForgetDto {
  @IsOptional()
  @IsString(coded('personal.bad_device', 'device: a token prefix (a string)'))
  @Matches(/^(?:[A-Za-z0-9_-]{4,64})$/, coded('personal.bad_device', 'device: a token prefix of at least 4 letters, digits, - or _, or "host"'))
  device?: string;

  @IsOptional()
  @IsString(coded('personal.bad_time', 'before: an ISO 8601 time (a string)'))
  @MaxLength(40, coded('personal.bad_time', 'before: an ISO 8601 time'))
  before?: string;

  @IsOptional()
  @IsBoolean(coded('personal.bad_flag', 'dry_run: true or false'))
  dry_run?: boolean;
}

/** `POST /console/api/sessions/:prefix/revoke`: optionally forget the device's content too. */
export class RevokeDto {
  @IsOptional()
  @IsBoolean(coded('personal.bad_flag', 'forget: true or false'))
  forget?: boolean;
}
