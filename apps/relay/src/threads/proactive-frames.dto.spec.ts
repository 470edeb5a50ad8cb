import 'reflect-metadata';
import { parseFrame } from '../common/sockets/parse-frame';
import { CancelFrame, ReplyFrame, SubscribeFrame } from './proactive-frames.dto';
import { MAX_TEXT } from './threads.dto';

/** The refusal of a frame: its code and message, as the phone's `proactive.error` carries them. */
const refusal = (dto: new () => object, payload: unknown) => {
  const r = parseFrame(dto, payload);
  return r.ok ? null : { code: r.error.code, message: r.error.message };
};

describe('proactive frames', () => {
  it('proactive.reply: each refusal is phone.bad_reply in the words the app has always had', () => {
    const bad = (message: string) => ({ code: 'phone.bad_reply', message });
    expect(refusal(ReplyFrame, {})).toEqual(bad('text: a non-empty string is required'));
    expect(refusal(ReplyFrame, { text: '  ' })).toEqual(bad('text: a non-empty string is required'));
    expect(refusal(ReplyFrame, { text: 7 })).toEqual(bad('text: a non-empty string is required'));
    expect(refusal(ReplyFrame, { text: 'x'.repeat(MAX_TEXT + 1) })).toEqual(bad(`text: at most ${MAX_TEXT} characters`));
    expect(refusal(ReplyFrame, { text: 'ok', chat_id: 'a\nb' })).toEqual(bad('chat_id: 1-256 printable characters'));
    expect(refusal(ReplyFrame, { text: 'ok', reply_to: 5 })).toEqual(bad('reply_to: a message id (1-256 printable characters)'));
    expect(refusal(ReplyFrame, { text: 'ok', message_id: '' })).toEqual(bad('message_id: 1-256 printable characters'));
  });

  it('proactive.reply: the text as sent, null ids none, other fields dropped', () => {
    const r = parseFrame(ReplyFrame, { text: ' yes ', chat_id: null, reply_to: 'msg-42', ts: 1, extra: true });
    expect(r.ok && { ...r.value }).toEqual({ text: ' yes ', chat_id: null, reply_to: 'msg-42' });
  });

  it('proactive.cancel: a queued message id, else phone.bad_message_id', () => {
    const bad = { code: 'phone.bad_message_id', message: 'message_id: a queued message id' };
    for (const message_id of [undefined, '', '-x', 'a b', 7]) expect(refusal(CancelFrame, { message_id })).toEqual(bad);
    expect(parseFrame(CancelFrame, { message_id: 'm-1' })).toMatchObject({ ok: true, value: { message_id: 'm-1' } });
  });

  it('proactive.subscribe: share_phone_status unless it says false; never refused', () => {
    const share = (payload: object) => {
      const r = parseFrame(SubscribeFrame, payload);
      return r.ok ? r.value.share_phone_status : r.error.message;
    };
    expect([share({}), share({ share_phone_status: false }), share({ share_phone_status: 'no' }), share({ share_phone_status: null })]).toEqual([
      true,
      false,
      true,
      true,
    ]);
  });
});
