import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from '../common/http/validators';

/** A seq or tree size in a query: decimal, from 1, at most 15 digits (checked before any work). */
const COUNT_RE = /^[1-9][0-9]{0,14}$/;
const COUNT = { message: '$property must be a whole number from 1 on (at most 15 digits)' };

/** `GET /log/proof/inclusion?seq=N[&size=S]`. */
export class InclusionQuery {
  @Matches(COUNT_RE, COUNT)
  seq!: string;

  @IsOptional()
  @Matches(COUNT_RE, COUNT)
  size?: string;
}

/** `GET /log/proof/consistency?from=M&to=N`. */
export class ConsistencyQuery {
  @Matches(COUNT_RE, COUNT)
  from!: string;

  @Matches(COUNT_RE, COUNT)
  to!: string;
}

/** `POST /log/cosignature`: a witness's tlog-cosignature/v1 line for the relay's tree of `size`. */
export class CosignatureDto {
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  size!: number;

  /** `— <name> <base64(key ID || timestamp || signature)>`: a name of at most 256 and 104 base64 characters. */
  @IsString()
  @MaxLength(400)
  cosignature!: string;
}

/** `POST /log/witness-refusal`: a witness's signed report that it refused a checkpoint of this relay. */
export class RefusalDto {
  @IsString()
  @MaxLength(256)
  witness!: string;

  @Matches(/^[0-9a-f]{8}$/, { message: 'key_hash must be 8 lowercase hex digits' })
  key_hash!: string;

  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  size!: number;

  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'root must be base64 of 32 bytes' })
  root!: string;

  /** One line (it is signed as one). */
  @Matches(/^[^\n\r]{1,300}$/, { message: 'reason must be one line of at most 300 characters' })
  reason!: string;

  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  time!: number;

  @Matches(/^[A-Za-z0-9+/]{86}==$/, { message: 'signature must be base64 of 64 bytes' })
  signature!: string;
}
