import { SECRET_NAME_MAX, SECRET_VALUE_MAX } from '@svc/domain';
import { coded } from '../common/http/dto-refusals';
import { IsString, Matches, MaxLength } from '../common/http/validators';

/*
 * The operator's secrets (issue 40, item 3). No message here quotes what it was given: a refusal of a
 * value says only what a value must be.
 */

export class SecretNameDto {
  @IsString(coded('secrets.bad_name', 'name: a string'))
  @MaxLength(SECRET_NAME_MAX, coded('secrets.bad_name', `name: at most ${SECRET_NAME_MAX} characters`))
  @Matches(/^[A-Za-z0-9_-]+$/, coded('secrets.bad_name', `name: 1 to ${SECRET_NAME_MAX} letters, digits, _ or -`))
  name!: string;
}

/** `POST /console/api/secrets`: registers or replaces one. */
export class SetSecretDto extends SecretNameDto {
  @IsString(coded('secrets.bad_value', 'value: a string'))
  @MaxLength(SECRET_VALUE_MAX, coded('secrets.bad_value', `value: at most ${SECRET_VALUE_MAX} characters`))
  value!: string;
}
