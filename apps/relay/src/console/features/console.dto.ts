import { IsBoolean, IsOptional, IsString, Matches } from '../../common/validators';
import { TermsDto } from '../../pairing/pairing.dto';
import { ShortenDto } from '../../sessions/sessions.dto';

/** The console shortens and mints through the same bodies as the phone and host routes. */
export class ConsoleShortenDto extends ShortenDto {}

export class ConsoleMintDto extends TermsDto {}

export class ConsoleApproveDto extends ConsoleMintDto {
  @IsString()
  @Matches(/^[0-9a-f-]{36}$/, { message: 'request_id must be the id of a pending request' })
  request_id!: string;
}

export class ConsoleDenyDto {
  @IsString()
  @Matches(/^[0-9a-f-]{36}$/, { message: 'request_id must be the id of a pending request' })
  request_id!: string;

  @IsOptional()
  @IsBoolean()
  quiet?: boolean;
}
