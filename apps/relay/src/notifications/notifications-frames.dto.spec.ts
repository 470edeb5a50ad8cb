import 'reflect-metadata';
import { parseFrame } from '../common/sockets/parse-frame';
import { NotificationPostedFrame, NotificationRemovedFrame } from './notifications-frames.dto';

/** The refusal of a frame: its code, message and extra fields, as the phone's `notifications.error` carries them. */
const refusal = (dto: new () => object, payload: unknown) => {
  const r = parseFrame(dto, payload);
  return r.ok ? null : { code: r.error.code, message: r.error.message, ...r.error.extra };
};

describe('notifications frames', () => {
  it('notification.posted: each refusal is notifications.bad_field naming its field, in the domain’s words', () => {
    const bad = (field: string, message: string) => ({ code: 'notifications.bad_field', message, field });
    expect(refusal(NotificationPostedFrame, { title: 'no package' })).toEqual(bad('package_name', 'package_name is required (a string)'));
    expect(refusal(NotificationPostedFrame, { package_name: '  ' })).toEqual(bad('package_name', 'package_name is required (a string)'));
    expect(refusal(NotificationPostedFrame, { package_name: 3 })).toEqual(bad('package_name', 'package_name must be a string'));
    expect(refusal(NotificationPostedFrame, { package_name: 'x', posted_at: 'yesterday' })).toEqual(
      bad('posted_at', 'posted_at must be epoch seconds'),
    );
    expect(refusal(NotificationPostedFrame, { package_name: 'x', posted_at: 1e16 })).toEqual(bad('posted_at', 'posted_at is out of range'));
    for (const field of ['title', 'text', 'sub_text', 'key'])
      expect(refusal(NotificationPostedFrame, { package_name: 'x', [field]: 5 })).toEqual(bad(field, `${field} must be a string`));
    // Several bad fields: the first the domain checks is named, every message is given.
    expect(refusal(NotificationPostedFrame, { title: 1, posted_at: 'x' })).toEqual(
      bad('package_name', 'package_name is required (a string); posted_at must be epoch seconds; title must be a string'),
    );
  });

  it('notification.posted: unknown fields dropped, absent or null ones none', () => {
    const r = parseFrame(NotificationPostedFrame, {
      package_name: 'com.chat',
      title: 'hi',
      sub_text: null,
      posted_at: 1772366400,
      some_new_field: [1],
    });
    expect(r.ok && r.value.entry()).toEqual({ packageName: 'com.chat', title: 'hi', text: null, subText: null, postedAt: 1772366400, key: null });
  });

  it('notification.removed: key required, a string', () => {
    expect(refusal(NotificationRemovedFrame, {})).toEqual({ code: 'notifications.bad_field', message: 'key is required (a string)', field: 'key' });
    expect(refusal(NotificationRemovedFrame, { key: 1 })).toEqual({ code: 'notifications.bad_field', message: 'key must be a string', field: 'key' });
    expect(parseFrame(NotificationRemovedFrame, { key: 'k' })).toMatchObject({ ok: true, value: { key: 'k' } });
  });
});
