import { coded } from '../../common/http/dto-refusals';
import { IsBoolean, IsOptional, IsString, Matches } from '../../common/http/validators';
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

/**
 * `POST /console/api/pairing/unblock`: the block's address as the Pairing page lists it (an IPv4 address,
 * an IPv6 address or /64, either maybe with ` via <forwarder>`, or a Reach route id). Printable, bounded.
 */
export class ConsoleUnblockDto {
  @IsString(coded('ratelimit.bad_address', 'address: the blocked address as listed (a string)'))
  @Matches(/^[\x21-\x7e](?:[\x20-\x7e]{0,126}[\x21-\x7e])?$/, coded('ratelimit.bad_address', 'address: 1-128 printable characters'))
  address!: string;
}

/** `POST /console/api/sessions/end-device-trust`: the device id of a renewal listed without a session. */
export class ConsoleEndDeviceTrustDto {
  @IsString(coded('trust.bad_device_id', 'device_id: the device id as listed (a string)'))
  @Matches(/^[^\x00-\x1f\x7f]{1,256}$/, coded('trust.bad_device_id', 'device_id: 1-256 printable characters'))
  device_id!: string;
}

/** `POST /console/api/terminal/shells/:shell_id/end`: the shell's id as the Terminal page lists it. */
export class ShellIdParam {
  @Matches(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, coded('terminal.bad_shell_id', 'shell_id: a shell id as listed'))
  shell_id!: string;
}

/** `GET /console/api/terminal/recordings/:recording_id`: a recording's id as listed (a UUID, never a path). */
export class RecordingIdParam {
  @Matches(
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    coded('terminal.bad_recording_id', 'recording_id: a recording id as listed'),
  )
  recording_id!: string;
}

/** `POST /console/api/session`: the one-time ticket from the sign-in link's fragment (32 random bytes, base64url). */
export class ConsoleSignInDto {
  @IsString(coded('console.link_invalid', 'ticket: the text after # in the sign-in link'))
  @Matches(/^[A-Za-z0-9_-]{43}$/, coded('console.link_invalid', 'ticket: the text after # in the sign-in link (43 characters)'))
  ticket!: string;
}
