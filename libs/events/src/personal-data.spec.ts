import { randomBytes } from 'node:crypto';
import { encodeRecord } from './chain';
import type { StoredEvent } from './event';
import {
  forgottenPersonal,
  isPersonalKeyId,
  parsePersonalKeyId,
  newPersonalKeyId,
  personalKeySlot,
  sealPersonal,
  unsealPersonal,
  withoutPersonal,
} from './personal-data';

const key = randomBytes(32);
const keyId = newPersonalKeyId(personalKeySlot('Ab3dEf9h', new Date('2026-11-26T10:37:12Z')));
const notification = {
  entryId: 'n1',
  tokenPrefix: 'Ab3dEf9h',
  deviceName: 'Pixel',
  packageName: 'com.bank',
  title: 'Your code',
  text: 'One-time code 482913',
  subText: null,
  postedAt: null,
  key: 'k1',
};

function stored(type: string, data: object): StoredEvent {
  return { seq: 1, id: 'i', at: '2026-11-26T10:37:12.000Z', type, actor: 'device:Ab3dEf9h', data, v: 1, prev: '0'.repeat(64), hash: 'h' };
}

describe('personal content in the records', () => {
  it('names one key slot per device and UTC hour, each key in it with a name of its own', () => {
    expect(keyId).toMatch(/^Ab3dEf9h:2026-11-26T10:[0-9a-f]{8}$/);
    expect(newPersonalKeyId('Ab3dEf9h:2026-11-26T10')).not.toBe(keyId);
    expect(parsePersonalKeyId(keyId)).toEqual({ device: 'Ab3dEf9h', slot: 'Ab3dEf9h:2026-11-26T10', hourStart: Date.parse('2026-11-26T10:00:00Z') });
    expect(isPersonalKeyId('../x:2026-11-26T10:00000000')).toBe(false);
    expect(parsePersonalKeyId('nope')).toBeNull();
  });

  it('the record holds no plain text of the sealed fields, the rest stays readable', () => {
    const record = sealPersonal('notification.posted', notification, keyId, key);
    const line = encodeRecord({ ...stored('notification.posted', record), hash: undefined } as never).line;
    expect(line).not.toContain('482913');
    expect(line).not.toContain('Your code');
    expect(record).toMatchObject({ entryId: 'n1', packageName: 'com.bank', deviceName: 'Pixel' });
    expect(record).not.toHaveProperty('text');
  });

  it('opens with its key to the data as decided, plus the key it was sealed under', () => {
    const record = sealPersonal('phone.message_posted', { messageId: 'm', chatId: 'c', text: 'hi', title: 'T', metadata: { a: 1 } }, keyId, key);
    const opened = unsealPersonal(stored('phone.message_posted', record), (id) => (id === keyId ? key : undefined));
    expect(opened.data).toEqual({ messageId: 'm', chatId: 'c', text: 'hi', title: 'T', metadata: { a: 1 }, sealedWith: keyId });
  });

  it.each([
    ['the key is gone', () => undefined],
    ['another key', () => randomBytes(32)],
  ])('replays as forgotten when %s', (_label, keyFor) => {
    const record = sealPersonal('notification.posted', notification, keyId, key);
    const opened = unsealPersonal(stored('notification.posted', record), keyFor);
    expect(opened.data).toEqual({ ...forgottenPersonal('notification.posted', notification), sealedWith: keyId });
    expect(JSON.stringify(opened)).not.toContain('482913');
  });

  it('a ciphertext moved to another event type or key name does not open (bound by its associated data)', () => {
    const record = sealPersonal('phone.reply_received', { replyId: 'r', chatId: 'c', text: 'secret reply' }, keyId, key);
    const moved = unsealPersonal(stored('phone.message_posted', record), () => key);
    expect((moved.data as { forgotten?: boolean }).forgotten).toBe(true);
    const renamed = { ...record, sealed: { ...(record.sealed as object), key: 'Zz9yXx8w:2026-11-26T10:0000abcd' } };
    expect((unsealPersonal(stored('phone.reply_received', renamed), () => key).data as { forgotten?: boolean }).forgotten).toBe(true);
  });

  it('a tampered ciphertext reads as forgotten, never as other text', () => {
    const record = sealPersonal('phone.reply_received', { replyId: 'r', chatId: 'c', text: 'secret reply' }, keyId, key) as {
      sealed: { ct: string };
    };
    const ct = Buffer.from(record.sealed.ct, 'base64');
    ct[0] ^= 1;
    const tampered = { ...record, sealed: { ...record.sealed, ct: ct.toString('base64') } };
    expect(unsealPersonal(stored('phone.reply_received', tampered), () => key).data).toMatchObject({ text: '', forgotten: true });
  });

  it('records of other types, and older records never sealed, pass unchanged', () => {
    const e = stored('session.created', { tokenPrefix: 'x' });
    expect(unsealPersonal(e, () => key)).toBe(e);
    const old = stored('notification.posted', notification);
    expect(unsealPersonal(old, () => key)).toBe(old);
  });

  it('the console form never carries the content, in any form', () => {
    const record = sealPersonal('notification.posted', notification, keyId, key);
    for (const form of [
      record,
      { ...notification, sealedWith: keyId },
      forgottenPersonal('notification.posted', { ...notification, sealedWith: keyId }),
    ]) {
      const shown = withoutPersonal(stored('notification.posted', form)).data as Record<string, unknown>;
      expect(JSON.stringify(shown)).not.toMatch(/482913|Your code|"ct"/);
      expect(shown.sealedWith).toBe(keyId);
      expect(shown.packageName).toBe('com.bank');
    }
  });
});
