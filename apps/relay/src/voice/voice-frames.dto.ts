import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, ValidateBy } from '../common/http/validators';

/*
 * The client frames of a voice session's socket that carry fields (read with parseFrame). Each is a JSON
 * object with a `type`; the session routes it by type (session-frames.ts), then reads it into one of these.
 * Fields the app sends loosely are taken as the reference relay takes them.
 */

const stringOrNone = ({ value }: { value: unknown }): unknown => (typeof value === 'string' ? value : undefined);

const COUNTS_RULE = 'last_event_id, last_audio_event_id, last_played_audio_event_id and last_input_chunk_id are whole numbers >= 0';
/** A resume cursor: absent or null is 0. */
const Cursor = (): PropertyDecorator => (target, key) => {
  Transform(({ value }: { value: unknown }) => value ?? 0)(target, key);
  ValidateBy({
    name: 'isCursor',
    validator: { validate: (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0, defaultMessage: () => COUNTS_RULE },
  })(target, key);
};

/**
 * `session.resume {resume_token, last_event_id, last_audio_event_id, last_played_audio_event_id?,
 * last_input_chunk_id?}` (also `session.start` carrying a `resume_token`, as the reference reads it): the
 * app's claim of a session (RelayVoiceClient.kt 942-960 and 1742-1745).
 */
export class ResumeFrame {
  @ValidateBy({
    name: 'isResumeToken',
    validator: {
      validate: (v: unknown) => typeof v === 'string' && v !== '' && v.length <= 256,
      defaultMessage: () => 'session.resume needs the resume_token of the session',
    },
  })
  resume_token!: string;

  @Cursor() last_event_id = 0;
  @Cursor() last_audio_event_id = 0;
  @Cursor() last_played_audio_event_id = 0;
  @Cursor() last_input_chunk_id = 0;
}

/** `client.ack {event_id}` (also `playback.drained`): the app acks every frame it has; anything else acks nothing. */
export class AckFrame {
  @ValidateBy({ name: 'isEventId', validator: { validate: (v: unknown) => Number.isSafeInteger(v) && (v as number) > 0 } })
  event_id!: number;
}

/** `input_audio.append {audio_base64, sample_rate?, chunk_id?}`: a chunk of the mic, 16-bit PCM. */
export class InputAudioFrame {
  /** Trimmed base64 (padding only at the end). */
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @ValidateBy({
    name: 'isAudioBase64',
    validator: {
      validate: (v: unknown) => typeof v === 'string' && v !== '' && /^[A-Za-z0-9+/]*={0,2}$/.test(v),
      defaultMessage: (a) =>
        typeof a?.value === 'string' && a.value !== '' ? 'input_audio.append audio_base64 is invalid' : 'input_audio.append missing audio_base64',
    },
  })
  audio_base64!: string;

  /** 8-48 kHz; anything else (or none) is 24 kHz, the rate the providers take. */
  @Transform(({ value }: { value: unknown }) => (Number.isInteger(value) && (value as number) >= 8000 && (value as number) <= 48000 ? value : 24000))
  @IsInt()
  sample_rate = 24000;

  /**
   * The app numbers its mic chunks and drops a chunk from its resend buffer once an ack names it as
   * `input_chunk_id` (notes of the app's RelayVoiceClient). Not a whole number >= 0: none.
   */
  @Transform(({ value }: { value: unknown }) => (Number.isSafeInteger(value) && (value as number) >= 0 ? value : undefined))
  @IsOptional()
  @IsInt()
  chunk_id?: number;
}

/** `response.create {text}` (`prompt` is read too): what to say, or to answer. */
export class ResponseCreateFrame {
  @Transform(stringOrNone)
  @IsOptional()
  @IsString()
  text?: string;

  @Transform(stringOrNone)
  @IsOptional()
  @IsString()
  prompt?: string;
}

/** `<brand>.confirm {confirmation_id, answer}`: the app's answer to a confirmation the agent asked for. */
export class ConfirmFrame {
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.slice(0, 128) : undefined))
  @IsOptional()
  @IsString()
  confirmation_id?: string;
}
