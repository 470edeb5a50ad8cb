import type { PhoneMessagePosted } from '@svc/events';
import { given } from '../../../../test/support/given';
import { ReadModels } from '../read-models';

const HOST_KEY = 'host:2026-03-01T12:0000aaaa';
const P_KEY = 'pppp1111:2026-03-01T12:0000bbbb';

/** A Thread message as the projections see it (open form: the key it went under in `sealedWith`). */
const posted = (messageId: string, sealedWith: string) => ({
  type: 'phone.message_posted' as const,
  data: {
    messageId,
    chatId: 'ops',
    text: 'x',
    title: null,
    surfacing: null,
    replyTo: null,
    metadata: null,
    sealedWith,
    expiresAt: '2026-03-02T12:00:00.000Z',
  } satisfies PhoneMessagePosted['data'],
});
const delivered = (messageId: string, tokenPrefix: string) => ({
  type: 'phone.message_delivered' as const,
  data: { messageId, chatId: 'ops', connId: `conn-${tokenPrefix}`, tokenPrefix, queued: true },
});

describe('personal-data read model: keys a device received that are not its own', () => {
  it('a message sealed under the host key (or another phone key) and delivered to a phone names that phone; its own key does not', () => {
    const m = new ReadModels();
    given(m, [
      posted('m1', HOST_KEY),
      posted('m2', P_KEY),
      posted('m3', P_KEY),
      posted('m4', HOST_KEY),
      delivered('m1', 'pppp1111'),
      delivered('m2', 'qqqq2222'),
      delivered('m3', 'pppp1111'),
      { type: 'phone.message_expired', data: { messageId: 'm4', chatId: 'ops' } },
      delivered('m4', 'rrrr3333'),
    ]);
    expect(m.personalData.receivers(HOST_KEY)).toEqual(['pppp1111']);
    expect(m.personalData.receivers(P_KEY)).toEqual(['qqqq2222']);
  });

  it('the same events twice are harmless; a snapshot restores it; a forgetting of the key clears it', () => {
    const events = [posted('m1', HOST_KEY), delivered('m1', 'pppp1111')];
    const once = new ReadModels();
    const twice = new ReadModels();
    given(once, events);
    given(twice, [...events, ...events]);
    expect(twice.personalData.snapshot()).toEqual(once.personalData.snapshot());
    const copy = new ReadModels();
    copy.restore(once.snapshot());
    expect(copy.personalData.receivers(HOST_KEY)).toEqual(['pppp1111']);
    given(once, [{ type: 'personal.forgotten', data: { scope: 'device', device: 'pppp1111', before: null, keys: [HOST_KEY] } }]);
    expect(once.personalData.receivers(HOST_KEY)).toEqual([]);
  });
});
