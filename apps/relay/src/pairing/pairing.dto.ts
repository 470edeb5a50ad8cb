import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
} from '../common/http/validators';

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

/**
 * The host's whole body (plugin/pair.py mint_relay_pairing: host, port, api_key, tls, ttl_seconds,
 * transport_hint, grants?, endpoints?, dashboard_url?) plus our relay_url. host/port/api_key/tls describe
 * the API server the phone chats with; they become the QR's top-level host/port/key/tls.
 */
export class MintDto extends TermsDto {
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] }, { message: 'dashboard_url must be an http(s) URL' })
  dashboard_url?: string;

  /** `""` is what the host sends when no API key is configured: the QR then carries `key: ""`. */
  @IsOptional()
  @IsString()
  @Length(0, 512)
  @Matches(/^[\x21-\x7e]*$/, { message: 'api_key must be printable ASCII without spaces' })
  api_key?: string;

  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9.:[\]_-]{1,253}$/, { message: 'host must be a host name or IP address' })
  host?: string;

  @IsOptional()
  @IsInt({ message: 'port must be a whole number' })
  @Min(1)
  @Max(65535)
  port?: number;

  @IsOptional()
  @IsBoolean({ message: 'tls must be true or false' })
  tls?: boolean;

  /** Endpoint candidates (ADR 24 in the reference), signed into the QR verbatim; checked in the service. */
  @IsOptional()
  @IsArray({ message: 'endpoints must be an array' })
  @ArrayMaxSize(8)
  @IsObject({ each: true, message: 'each endpoint must be an object' })
  endpoints?: Record<string, unknown>[];

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
