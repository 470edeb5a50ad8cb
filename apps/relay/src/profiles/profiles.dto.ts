import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, IsString, ValidateBy, ValidateIf } from '../common/http/validators';

/** `PUT /api/profiles/{name}/soul` and `.../memory/{filename}`: the file's new text (its cap in bytes is checked after). */
export class FileContentDto {
  @IsString({ message: 'send {"content": "..."} (a string)' })
  content!: string;
}

const ENABLE_USAGE = 'send {"names": ["<profile>", ...]} or {"all": true}, optionally "dry_run": true';
/** Anything but `true` is "no", as the CLI and the earlier hand check read these flags. */
const onlyTrue = ({ value }: { value: unknown }): boolean => value === true;

/** `POST /relay/profiles/enable`: the profiles to enable, or all of them; `dry_run` writes nothing. */
export class EnableProfilesDto {
  @ValidateIf((o: EnableProfilesDto) => o.names !== undefined)
  @ValidateBy({
    name: 'isNameList',
    validator: { validate: (v: unknown) => Array.isArray(v) && v.every((n) => typeof n === 'string'), defaultMessage: () => ENABLE_USAGE },
  })
  names?: string[];

  @IsOptional()
  @Transform(onlyTrue)
  @IsBoolean()
  all?: boolean;

  @IsOptional()
  @Transform(onlyTrue)
  @IsBoolean()
  dry_run?: boolean;
}
