import { Transform } from 'class-transformer';
import { IsOptional, IsString, ValidateIf } from '../common/http/validators';

/** A query value the way the host's tool checks send it: trimmed, and blank (or repeated) means "not given". */
const trimmedOrAbsent = ({ value }: { value: unknown }): string | undefined => (typeof value === 'string' && value.trim() ? value.trim() : undefined);

/** `GET /desktop/_ping[?tool=][&device=]`: readiness for one tool and/or one client. */
export class DesktopPingQuery {
  @IsOptional()
  @Transform(trimmedOrAbsent)
  @IsString()
  tool?: string;

  @IsOptional()
  @Transform(trimmedOrAbsent)
  @IsString()
  device?: string;
}

const SELECTOR_MESSAGE = 'device must be a string (a device_id or name)';

/**
 * `POST /desktop/{tool}`: the body is the tool's arguments, a JSON object of any shape, forwarded as it
 * came (DesktopController takes them beside this class). This class is the part the relay reads: `device`
 * (or `device_id` when `device` is absent or null) picks the client and is not forwarded.
 */
export class DesktopToolCallDto {
  @ValidateIf((o: DesktopToolCallDto) => o.device !== undefined && o.device !== null)
  @IsString({ message: SELECTOR_MESSAGE })
  device?: string | null;

  @ValidateIf((o: DesktopToolCallDto) => (o.device === undefined || o.device === null) && o.device_id !== undefined && o.device_id !== null)
  @IsString({ message: SELECTOR_MESSAGE })
  device_id?: string | null;

  /** The selector as given: blank is none (any client that serves the tool). */
  selector(): string | null {
    const raw = this.device ?? this.device_id;
    return typeof raw === 'string' && raw.trim() ? raw.trim() : null;
  }
}

/** The tool's arguments: the body without the selector. */
export function toolArguments(body: Record<string, unknown> | undefined | null): Record<string, unknown> {
  const { device: _device, device_id: _deviceId, ...args } = body ?? {};
  return args;
}
