import { Type } from 'class-transformer';
import { coded, RefuseUnknownKeys } from '../common/http/dto-refusals';
import { IsIn, IsInt, IsNotEmpty, IsNumber, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min } from '../common/http/validators';
import { SURFACINGS } from '@svc/domain';
import type { Surfacing } from '@svc/events';

/** Printable, no control characters. */
export const CHAT_ID = /^[^\x00-\x1f\x7f]{1,256}$/;
export const MESSAGE_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
export const MAX_TEXT = 32_768;
/**
 * An id the relay did not mint (a phone's reply id, a message a reply answers): any 1-256 printable
 * characters, since the host platform echoes the phone's ids back as `reply_to`.
 */
export const REF_ID = CHAT_ID;

/** What a message and a reply share: the conversation, the text, and what it answers. */
export class ChatTextDto {
  /** The conversation; omitted: the home channel's chat (`phone`). */
  @IsOptional()
  @IsString()
  @Matches(CHAT_ID, { message: 'chat_id: 1-256 printable characters' })
  chat_id?: string;

  @IsString({ message: 'text must be a string' })
  @IsNotEmpty({ message: 'text must not be empty' })
  @MaxLength(MAX_TEXT, { message: `text: at most ${MAX_TEXT} characters` })
  text!: string;

  @IsOptional()
  @IsString()
  @Matches(REF_ID, { message: 'reply_to: a message id (1-256 printable characters)' })
  reply_to?: string | null;
}

export class PostMessageDto extends ChatTextDto {
  @IsOptional()
  @IsString()
  @MaxLength(256, { message: 'title: at most 256 characters' })
  title?: string | null;

  /** omitted or null: `default`. */
  @IsOptional()
  @IsIn(SURFACINGS as Surfacing[], { message: `surfacing must be one of ${SURFACINGS.join(', ')} (or null)` })
  surfacing?: Surfacing | null;

  @IsOptional()
  @IsObject({ message: 'metadata must be an object' })
  metadata?: Record<string, unknown> | null;

  /** The caller's id for the message: a retry with the same id is answered, not queued twice. */
  @IsOptional()
  @IsString()
  @Matches(MESSAGE_ID, { message: 'message_id: 1-128 of A-Z a-z 0-9 _ . : - (starting with a letter or digit)' })
  message_id?: string;

  /** The host's session for this conversation (our addition): `/phone/threads` reports it as `session_id`. */
  @IsOptional()
  @IsString()
  @Matches(REF_ID, { message: 'session_id: 1-256 printable characters' })
  session_id?: string | null;
}

export class PostReplyDto extends ChatTextDto {
  /** The phone's own id for the reply (as `proactive.reply {message_id}`). */
  @IsOptional()
  @IsString()
  @Matches(REF_ID, { message: 'message_id: 1-256 printable characters' })
  message_id?: string | null;
}

export class RepliesQueryDto {
  /** The cursor of the last reply already seen (0: from the oldest kept). */
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'since must be a whole number (a cursor from an earlier answer)' })
  @Min(0)
  since?: number;

  /**
   * The host platform's name for `wait` (PhoneAdapter polls `?timeout=25`): seconds, fractions allowed,
   * clamped to 30 as the reference relay does.
   */
  @IsOptional()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'timeout must be seconds (a number)' })
  @Min(0, { message: 'timeout must not be negative' })
  timeout?: number;

  /** Seconds to hold the request open when nothing is new (0-30, default 20). */
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'wait must be whole seconds' })
  @Min(0)
  @Max(30, { message: 'wait: at most 30 seconds' })
  wait?: number;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500, { message: 'limit: 1-500' })
  limit?: number;

  @IsOptional()
  @IsString()
  @Matches(CHAT_ID, { message: 'chat_id: 1-256 printable characters' })
  chat_id?: string;
}

export class ChatFilterDto {
  @IsOptional()
  @IsString()
  @Matches(CHAT_ID, { message: 'chat_id: 1-256 printable characters' })
  chat_id?: string;
}

/**
 * `DELETE /phone/outbound?message_id=&chat_id=`. Cancelling is destructive: a misspelt filter must not widen
 * into "cancel everything", so any other key is refused by name.
 */
@RefuseUnknownKeys('phone.bad_cancel_query', (key) => `unknown query parameter ${key.slice(0, 64)}: use message_id or chat_id`)
export class CancelQueryDto extends ChatFilterDto {
  /** One message to cancel (the desktop CLI's `relay queue --cancel <id>`). */
  @IsOptional()
  @IsString()
  @Matches(MESSAGE_ID, { message: 'message_id: 1-128 of A-Z a-z 0-9 _ . : - (starting with a letter or digit)' })
  message_id?: string;
}

/** `/phone/outbound/:message_id`. */
export class MessageIdParam {
  @Matches(MESSAGE_ID, coded('phone.bad_message_id', 'message_id: 1-128 of A-Z a-z 0-9 _ . : -'))
  message_id!: string;
}

/** `/phone/threads/:chat_id`. */
export class ChatIdParam {
  @Matches(CHAT_ID, coded('phone.bad_chat_id', 'chat_id: 1-256 printable characters'))
  chat_id!: string;
}
