import type { VoiceSection } from '@svc/events';
import { coded, RefuseNonObject, RefuseUnknownKeys } from '../../common/http/dto-refusals';
import { IsBoolean, IsIn, IsString, Matches, MaxLength, ValidateIf } from '../../common/http/validators';
import { MEMORY_FILE_RE } from '../../profiles/profiles.service';
import { PROFILE_NAME_RE, PROFILE_NAME_RULE } from '../../voice/voice-config';

/* The console's Voice and Profiles commands: each body exactly what it names (anything else is refused by name). */

const SECTIONS: readonly VoiceSection[] = ['voice_output', 'realtime_voice', 'realtime_agent'];

const SWITCH_USAGE = 'send {"enabled": true|false}';

/** `/console/api/voice/sections/:section`. */
export class VoiceSectionParam {
  @IsIn(SECTIONS, coded('voice.unknown_section', `section must be one of ${SECTIONS.join(', ')}`))
  section!: VoiceSection;
}

/** The relay-wide switch of a voice section (PATCH /voice/.../config {"enabled"} from loopback). */
@RefuseNonObject('console.bad_body', SWITCH_USAGE)
@RefuseUnknownKeys('console.bad_body', (key) => `unknown field "${key.slice(0, 64)}": ${SWITCH_USAGE}`)
export class VoiceSwitchDto {
  @IsBoolean(coded('console.bad_body', SWITCH_USAGE))
  enabled!: boolean;
}

const SECURITY_USAGE = 'send {"allow_insecure_api_bearer": true|false}';

/** The API-bearer escape hatch (PATCH /relay/security). */
@RefuseNonObject('console.bad_body', SECURITY_USAGE)
@RefuseUnknownKeys('console.bad_body', (key) => `unknown field "${key.slice(0, 64)}": ${SECURITY_USAGE}`)
export class VoiceSecurityDto {
  @IsBoolean(coded('console.bad_body', SECURITY_USAGE))
  allow_insecure_api_bearer!: boolean;
}

/** `/console/api/profiles/:name/...`. */
export class ProfileNameParam {
  @Matches(PROFILE_NAME_RE, coded('profile.bad_name', PROFILE_NAME_RULE.replace(/^profile/, 'the profile')))
  name!: string;
}

/** `/console/api/profiles/:name/memory/:filename`. */
export class MemoryFileParam extends ProfileNameParam {
  @Matches(
    MEMORY_FILE_RE,
    coded('profile.bad_filename', 'a memory file name is letters, digits, " _.-" (not first), at most 100 characters, ending in .md or .txt'),
  )
  filename!: string;
}

const WRITE_USAGE = 'send {"content": "...", "if_match": "<the ETag read with the file>" | null (the file did not exist)}';

/**
 * An edit of SOUL.md or a memory file: its new text and the ETag it was read with, always. `null` says the
 * file did not exist when read (the write is refused if it does now); an edit is never blind.
 */
@RefuseNonObject('console.bad_body', WRITE_USAGE)
@RefuseUnknownKeys('console.bad_body', (key) => `unknown field "${key.slice(0, 64)}": ${WRITE_USAGE}`)
export class ProfileWriteDto {
  @IsString(coded('console.bad_body', WRITE_USAGE))
  content!: string;

  @ValidateIf((o: ProfileWriteDto) => o.if_match !== null)
  @IsString(coded('console.bad_body', WRITE_USAGE))
  @MaxLength(128, coded('console.bad_body', 'if_match is an ETag (at most 128 characters)'))
  if_match!: string | null;
}
