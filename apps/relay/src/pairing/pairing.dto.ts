import { IsBoolean, IsInt, IsObject, IsOptional, IsString, IsUrl, Length, Matches, Max, MaxLength, Min } from 'class-validator';

export class TermsDto {
  @IsOptional()
  @IsInt({ message: 'ttl_seconds must be a whole number of seconds (0: never)' })
  @Min(0)
  @Max(315_360_000)
  ttl_seconds?: number;

  @IsOptional()
  @IsObject({ message: 'grants must be an object of channel -> duration' })
  grants?: Record<string, unknown>;

  @IsOptional()
  @IsString()
  @MaxLength(32)
  transport_hint?: string;
}

export class RegisterCodeDto extends TermsDto {
  @IsString({ message: 'code must be a string of 6 characters A-Z, 0-9' })
  @Length(6, 6, { message: 'code must be exactly 6 characters' })
  code!: string;
}

export class MintDto extends TermsDto {
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] }, { message: 'dashboard_url must be an http(s) URL' })
  dashboard_url?: string;

  @IsOptional()
  @IsString()
  @Length(1, 512)
  api_key?: string;

  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['ws', 'wss'] }, { message: 'relay_url must be a ws:// or wss:// URL' })
  relay_url?: string;
}

export class PublicPairingDto {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  device_name?: string;
}

export class ApproveDto extends TermsDto {
  @IsOptional()
  @IsString()
  @Length(6, 6)
  code?: string;

  @IsOptional()
  @IsString()
  @Matches(/^[0-9a-f-]{36}$/, { message: 'request_id must be the id POST /pairing returned' })
  request_id?: string;
}

export class DenyDto {
  @IsOptional()
  @IsString()
  @Length(6, 6)
  code?: string;

  @IsOptional()
  @IsString()
  @Matches(/^[0-9a-f-]{36}$/)
  request_id?: string;

  @IsOptional()
  @IsBoolean()
  quiet?: boolean;
}
