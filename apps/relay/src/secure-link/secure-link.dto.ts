import { Transform } from 'class-transformer';
import { IsOptional, Matches, ValidateBy } from '../common/http/validators';

/** `GET /secure-link/preflight[?host=&port=]`: a host and port the operator is thinking of. */
export class PreflightQuery {
  @IsOptional()
  @Matches(/^[A-Za-z0-9.:-]{1,253}$/, { message: 'host must be an IP address or a DNS name' })
  host?: string;

  @IsOptional()
  @Transform(({ value }) => (value === undefined ? undefined : Number(value)))
  @ValidateBy({
    name: 'isPort',
    validator: {
      validate: (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535,
      defaultMessage: () => 'port must be 1-65535',
    },
  })
  port?: number;
}
