import { IsOptional, Matches } from '../common/http/validators';
import { PROFILE_NAME_RE } from '../voice/voice-config';

/** `GET /usage/providers[?profile=][&session_id=]`: the scope (both optional; a repeated one is refused). */
export class UsageQuery {
  @IsOptional()
  @Matches(PROFILE_NAME_RE, { message: 'profile must be a profile name' })
  profile?: string;

  @IsOptional()
  @Matches(/^[\w.:@-]{1,128}$/, { message: 'session_id must be a chat session id (at most 128 letters, digits and "_.:@-")' })
  session_id?: string;
}
