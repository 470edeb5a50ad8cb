import type { ConsoleEvent } from '@svc/events';
import { withKeyState } from './personal-key-state';

const ev = (data: Record<string, unknown>): ConsoleEvent => ({
  seq: 7,
  id: 'e7',
  at: '2026-03-01T12:00:00.000Z',
  type: 'notification.posted',
  actor: 'device:abcd1234',
  data,
  hash: 'h',
});
const KEY = 'abcd1234:2026-03-01T12:0badc0de';

describe('withKeyState: the Events page says whether sealed content can still be opened', () => {
  it('says forgotten once the key is gone, sealed while it is kept, and leaves the rest of the event as it was', () => {
    const sealed = ev({ packageName: 'com.bank', sealedWith: KEY, content: 'sealed' });
    expect(withKeyState(sealed, () => false).data).toEqual({ packageName: 'com.bank', sealedWith: KEY, content: 'forgotten' });
    expect(withKeyState(sealed, (id) => id === KEY)).toBe(sealed);
    expect(sealed.data.content).toBe('sealed');
  });

  it('leaves other events, content already forgotten, and a relay without a key store alone', () => {
    const plain = ev({ packageName: 'com.bank' });
    expect(withKeyState(plain, () => false)).toBe(plain);
    const gone = ev({ sealedWith: KEY, content: 'forgotten', forgotten: true });
    expect(withKeyState(gone, () => true)).toBe(gone);
    const sealed = ev({ sealedWith: KEY, content: 'sealed' });
    expect(withKeyState(sealed, null)).toBe(sealed);
  });
});
