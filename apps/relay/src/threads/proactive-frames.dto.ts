import { Transform } from 'class-transformer';
import { Check, coded } from '../common/http/dto-refusals';
import { IsBoolean } from '../common/http/validators';
import { CHAT_ID, MAX_TEXT, MESSAGE_ID, REF_ID } from './threads.dto';

/*
 * The `proactive` channel's frames that carry fields, read with readFrame (parse-frame.ts). A reply is
 * checked as `POST /phone/replies` checks its body (the same patterns), in the words and code
 * (`phone.bad_reply`) the app has always had on the socket.
 */

/** Absent or null passes; anything else must be a string `re` matches. */
const noneOr = (re: RegExp) => (v: unknown) => v === undefined || v === null || (typeof v === 'string' && re.test(v));
const reply = (message: string) => coded('phone.bad_reply', message);

/** `proactive.subscribe {share_phone_status?}`: the phone's status shared unless it says false. */
export class SubscribeFrame {
  @Transform(({ value }: { value: unknown }) => (typeof value === 'boolean' ? value : true))
  @IsBoolean()
  share_phone_status = true;
}

/** `proactive.reply {chat_id?, text, reply_to?, message_id?, ts?}` (also `phone.reply`). */
export class ReplyFrame {
  @Check('replyText', (v) => typeof v === 'string' && v.trim().length > 0, reply('text: a non-empty string is required'))
  @Check('replyTextLength', (v) => typeof v !== 'string' || v.length <= MAX_TEXT, reply(`text: at most ${MAX_TEXT} characters`))
  text!: string;

  @Check('replyChatId', noneOr(CHAT_ID), reply('chat_id: 1-256 printable characters'))
  chat_id?: string | null;

  @Check('replyTo', noneOr(REF_ID), reply('reply_to: a message id (1-256 printable characters)'))
  reply_to?: string | null;

  /** The phone's own id for the reply (its `client_msg_id`). */
  @Check('replyMessageId', noneOr(REF_ID), reply('message_id: 1-256 printable characters'))
  message_id?: string | null;
}

/** `proactive.cancel {message_id}`: the socket twin of `DELETE /phone/outbound?message_id=`. */
export class CancelFrame {
  @Check('queuedMessageId', (v) => typeof v === 'string' && MESSAGE_ID.test(v), coded('phone.bad_message_id', 'message_id: a queued message id'))
  message_id!: string;
}
