import { IsBoolean, IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export class ConsoleShortenDto {
  @IsOptional()
  @IsInt({ message: 'ttl_seconds must be a whole number of seconds' })
  @Min(0)
  @Max(315_360_000)
  ttl_seconds?: number;

  @IsOptional()
  @IsObject({ message: 'grants must be an object of channel -> duration or false' })
  grants?: Record<string, unknown>;
}

export class ConsoleMintDto {
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
