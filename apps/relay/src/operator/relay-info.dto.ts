import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, Matches, ValidateBy, ValidateIf } from '../common/http/validators';

/** `GET /relay/update-check[?refresh=1]`: `1` or `true` asks the feed again, past the hour's cache. */
export class UpdateCheckQuery {
  @IsOptional()
  @Transform(({ value }) => value === '1' || value === 'true')
  @IsBoolean()
  refresh?: boolean;
}

export type ModelPair = { provider: string; model: string };

const text = (v: unknown, max: number) => typeof v === 'string' && v.trim() !== '' && v.length <= max && !/[\x00-\x1f]/.test(v);
/** The app cuts providers to 128 characters and models to 512 (RelayHttpClient.kt 69-70), as the reference bounds them. */
const isPair = (m: unknown): m is ModelPair =>
  typeof m === 'object' && m !== null && text((m as ModelPair).provider, 128) && text((m as ModelPair).model, 512);

/**
 * `POST /relay/model-capabilities` (spec 4.10): schema 1, 1-64 `{provider, model}` pairs. A body of another
 * schema is not validated further: the route refuses it as `unsupported_schema`, a code of its own.
 * The app encodes this body with kotlinx and no `encodeDefaults` (RelayHttpClient.kt 71-76, 717-723), so
 * `schema_version: 1`, a null `profile` and `refresh: false` are never sent: each absent field is its
 * default, as in the reference (plugin/relay/server.py:2519-2537).
 */
export class ModelCapabilitiesDto {
  /** Checked by the route (a wrong one is `unsupported_schema`, not a validation failure); absent is 1. */
  @IsOptional()
  schema_version?: unknown = 1;

  /** Any profile name the app holds, up to 128 printable characters (only echoed: no probe reads a profile here). */
  @ValidateIf((o: ModelCapabilitiesDto) => o.schema_version === 1 && o.profile !== undefined && o.profile !== null && o.profile !== '')
  @Matches(/^[^\x00-\x1f\x7f]{1,128}$/, { message: 'profile must be a profile name of at most 128 printable characters' })
  profile?: string | null;

  @ValidateIf((o: ModelCapabilitiesDto) => o.schema_version === 1 && o.refresh !== undefined)
  @IsBoolean({ message: 'refresh must be true or false' })
  refresh?: boolean;

  @ValidateIf((o: ModelCapabilitiesDto) => o.schema_version === 1)
  @ValidateBy({
    name: 'isModelPairs',
    validator: {
      validate: (v: unknown) => Array.isArray(v) && v.length >= 1 && v.length <= 64 && v.every(isPair),
      defaultMessage: (a) => {
        const v = a?.value as unknown;
        if (!Array.isArray(v) || v.length < 1 || v.length > 64)
          return `models must be a list of 1 to 64 {provider, model} pairs${Array.isArray(v) ? `, got ${v.length}` : ''}`;
        const i = v.findIndex((m) => !isPair(m));
        return `models[${i}] must be {"provider": "...", "model": "..."} (at most 128 and 512 characters)`;
      },
    },
  })
  models!: ModelPair[];
}
