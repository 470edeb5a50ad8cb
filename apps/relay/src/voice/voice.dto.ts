import { MAX_CONTEXT_MESSAGES, VOICE_SETTING_KEYS, voiceSettingProblem, type VoiceSettingKind } from '@svc/domain';
import type { VoiceSection, VoiceSettingValue } from '@svc/events';
import { Transform } from 'class-transformer';
import { IsArray, IsBoolean, IsInt, IsNumber, IsOptional, IsString, ValidateBy, ValidateIf } from '../common/http/validators';
import { PROFILE_NAME_RE, PROFILE_NAME_RULE } from './voice-config';

/*
 * The voice routes' bodies and queries (spec 4.5). Fields the reference relay's clients send loosely are
 * taken as it takes them: a value of the wrong type is ignored (the configured one applies), not refused.
 * What is refused is refused with the messages the clients have always read; the voice controller adds
 * the voice routes' `success: false` (voice-refusal.filter.ts).
 */

/**
 * For the OpenAPI schema, which takes a custom check's type from reflection: a field typed `string | null`
 * is a string (reflection says Object; null is "none"); `null` leaves the type to the field's other checks.
 */
const SchemaType =
  (type: (abstract new (...args: never[]) => unknown) | null): PropertyDecorator =>
  (target, key) => {
    if (type) Reflect.defineMetadata('design:type', type, target, key);
    else Reflect.deleteMetadata('design:type', target, key);
  };

/** `profile`: absent, null or empty (none), or a name that could be a profile directory. */
const ProfileName = (): PropertyDecorator => (target, key) => {
  IsOptional()(target, key);
  ValidateBy({
    name: 'isProfileName',
    validator: { validate: (v: unknown) => v === '' || (typeof v === 'string' && PROFILE_NAME_RE.test(v)), defaultMessage: () => PROFILE_NAME_RULE },
  })(target, key);
  SchemaType(String)(target, key);
};

/** A field that is a string or nothing: another type is dropped. */
const stringOrNone = ({ value }: { value: unknown }): unknown => (typeof value === 'string' ? value : undefined);
/** A session's voice or model: a non-blank string of at most 128 characters (trimmed), or nothing. */
const shortName = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && value.trim() !== '' && value.length <= 128 ? value.trim() : undefined;

export class ProfileQuery {
  @ProfileName()
  profile?: string;
}

export class TranscribeQuery extends ProfileQuery {
  /** A language code passed to the provider; the profile's stt language otherwise. */
  @Transform(stringOrNone)
  @IsOptional()
  @IsString()
  language?: string;
}

/** `POST /voice/synthesize`: `{text, profile?, voice?, model?, speed?, provider?, language?}`. */
export class SynthesizeDto {
  /** Trimmed. Past 5,000 characters the service refuses it (`voice.text_too_long`, with the bound). */
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @ValidateBy({
    name: 'isSpokenText',
    validator: {
      validate: (v: unknown) => typeof v === 'string' && v !== '',
      defaultMessage: (a) => (typeof a?.value === 'string' ? "'text' must not be empty" : "'text' must be a string"),
    },
  })
  text!: string;

  @ProfileName()
  profile?: string | null;

  @Transform(stringOrNone)
  @IsOptional()
  @IsString()
  voice?: string;

  @Transform(stringOrNone)
  @IsOptional()
  @IsString()
  model?: string;

  /** A speaking rate (1 is normal); a value that is not a finite number is ignored. */
  @Transform(({ value }: { value: unknown }) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined))
  @IsOptional()
  @IsNumber()
  speed?: number;

  /** A provider by any name configs use; present but not a name, the default provider. */
  @IsOptional()
  provider?: unknown;

  /** The language to speak (the app's enhanced overrides send it, RelayVoiceClient.kt 264-270); one the provider cannot speak is 400. */
  @Transform(shortName)
  @IsOptional()
  @IsString()
  language?: string;
}

/** `POST /voice/{output,realtime}/session`. */
export class VoiceSessionDto {
  @ProfileName()
  profile?: string | null;

  /** A provider by any name configs use; the section's when absent (or not a string). */
  @Transform(stringOrNone)
  @IsOptional()
  @IsString()
  provider?: string;

  /** At most 128 characters; longer, blank or not a string is ignored (the section's applies). */
  @Transform(shortName)
  @IsOptional()
  @IsString()
  voice?: string;

  @Transform(shortName)
  @IsOptional()
  @IsString()
  model?: string;

  /**
   * The language to speak (the app sends it, RelayVoiceClient.kt 3049-3063: a provider's code or what was typed);
   * the voice output settings' when absent; one the provider cannot speak is 400 `voice.language_unavailable`.
   */
  @Transform(shortName)
  @IsOptional()
  @IsString()
  language?: string;
}

const CHAT_SESSION_RE = /^[A-Za-z0-9_.:-]{1,128}$/;
export type ContextMessage = { role: 'user' | 'assistant' | 'system'; content: string };
const isContextMessage = (m: unknown): m is ContextMessage =>
  typeof m === 'object' &&
  m !== null &&
  ['user', 'assistant', 'system'].includes((m as { role?: unknown }).role as string) &&
  typeof (m as { content?: unknown }).content === 'string';

/** `POST /voice/realtime-agent/session`: also the app's `chat_session_id` and its recent `context_messages`. */
export class AgentSessionDto extends VoiceSessionDto {
  /** The agent chat session the turns continue (absent, null or empty: none). */
  @IsOptional()
  @ValidateBy({
    name: 'isChatSessionId',
    validator: {
      validate: (v: unknown) => v === '' || (typeof v === 'string' && CHAT_SESSION_RE.test(v)),
      defaultMessage: () => 'chat_session_id must be 1-128 letters, digits, "_", ".", ":" or "-"',
    },
  })
  @SchemaType(String)
  chat_session_id?: string | null;

  /** Only the last 14 count (and are checked); each content is kept to 1,500 characters. Null is not a list. */
  @Transform(({ value }: { value: unknown }) => (Array.isArray(value) ? value.slice(-MAX_CONTEXT_MESSAGES) : value))
  @ValidateIf((o: AgentSessionDto) => o.context_messages !== undefined)
  @IsArray({ message: 'context_messages must be a list' })
  @ValidateBy({
    name: 'isContext',
    validator: {
      validate: (v: unknown) => !Array.isArray(v) || v.every(isContextMessage),
      defaultMessage: () => 'each context message is {"role": "user"|"assistant"|"system", "content": "..."}',
    },
  })
  @SchemaType(null)
  context_messages?: ContextMessage[];
}

/** `POST .../providers/{id}/validate`: each field is checked against the provider's options and reported on, whatever its type. */
export class SelectionDto {
  @ProfileName()
  profile?: string | null;

  @IsOptional()
  model?: unknown;

  @IsOptional()
  voice?: unknown;

  @IsOptional()
  sample_rate?: unknown;

  @IsOptional()
  language?: unknown;
}

/**
 * `PATCH /voice/{output,realtime,realtime-agent}/config`: `profile` and the section's settings
 * (VOICE_SETTING_KEYS, each checked by voiceSettingProblem; null removes one). The keys a body sent that
 * are no setting are refused by name in the domain (voiceSettingsChanges), since the pipe drops them.
 */
export abstract class SettingsPatch {
  @ProfileName()
  profile?: string | null;

  [setting: string]: VoiceSettingValue | undefined;
}

export class OutputSettingsPatch extends SettingsPatch {}
export class RealtimeSettingsPatch extends SettingsPatch {}
export class AgentSettingsPatch extends SettingsPatch {}

const KIND_CHECK: Record<VoiceSettingKind, { decorator: typeof IsString; is: (v: unknown) => boolean }> = {
  bool: { decorator: IsBoolean, is: (v) => typeof v === 'boolean' },
  int: { decorator: IsInt, is: (v) => Number.isInteger(v) },
  string: { decorator: IsString, is: (v) => typeof v === 'string' },
};

/** A section's settings as the DTO's fields: the type (for the schema and the first check), then the rest of the rule, one message each. */
function declareSettings(dto: abstract new () => SettingsPatch, section: VoiceSection): void {
  for (const [key, kind] of Object.entries(VOICE_SETTING_KEYS[section])) {
    const message = voiceSettingProblem(key, kind, undefined)!;
    const check = KIND_CHECK[kind];
    IsOptional()(dto.prototype, key);
    check.decorator({ message })(dto.prototype, key);
    ValidateBy({
      name: 'isVoiceSetting',
      validator: { validate: (v: unknown) => !check.is(v) || voiceSettingProblem(key, kind, v) === null, defaultMessage: () => message },
    })(dto.prototype, key);
  }
}
declareSettings(OutputSettingsPatch, 'voice_output');
declareSettings(RealtimeSettingsPatch, 'realtime_voice');
declareSettings(AgentSettingsPatch, 'realtime_agent');

/** `PATCH /relay/security`: exactly `{"allow_insecure_api_bearer": true|false}` (another key is refused: security.controller.ts). */
export class SecurityPatch {
  @IsBoolean({ message: 'send {"allow_insecure_api_bearer": true|false}' })
  allow_insecure_api_bearer!: boolean;
}
