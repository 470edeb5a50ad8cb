import { messageDelivered, messageExpired, messagePosted, personalForgotten } from '../../../../test/support/events';
import { Given } from '../../../../test/support/given';
import { ReadModels } from '../read-models';

const HOST_KEY = 'host:2026-03-01T12:0000aaaa';
const P_KEY = 'pppp1111:2026-03-01T12:0000bbbb';

/** A Thread message as the projections see it (open form: the key it went under in `sealedWith`). */
const posted = (messageId: string, sealedWith: string) => messagePosted({ messageId, chatId: 'ops', sealedWith });
const delivered = (messageId: string, tokenPrefix: string) => messageDelivered({ messageId, chatId: 'ops', tokenPrefix });

describe('personal-data read model: keys a device received that are not its own', () => {
  it('a message sealed under the host key (or another phone key) and delivered to a phone names that phone; its own key does not', () => {
    const m = new Given().apply([
      posted('m1', HOST_KEY),
      posted('m2', P_KEY),
      posted('m3', P_KEY),
      posted('m4', HOST_KEY),
      delivered('m1', 'pppp1111'),
      delivered('m2', 'qqqq2222'),
      delivered('m3', 'pppp1111'),
      messageExpired({ messageId: 'm4', chatId: 'ops' }),
      delivered('m4', 'rrrr3333'),
    ]).models;
    expect(m.personalData.receivers(HOST_KEY)).toEqual(['pppp1111']);
    expect(m.personalData.receivers(P_KEY)).toEqual(['qqqq2222']);
  });

  it('the same events twice are harmless; a snapshot restores it; a forgetting of the key clears it', () => {
    const events = [posted('m1', HOST_KEY), delivered('m1', 'pppp1111')];
    const once = new Given().apply(events);
    const twice = new Given().apply([...events, ...events]);
    expect(twice.models.personalData.snapshot()).toEqual(once.models.personalData.snapshot());
    const copy = new ReadModels();
    copy.restore(once.models.snapshot());
    expect(copy.personalData.receivers(HOST_KEY)).toEqual(['pppp1111']);
    once.apply([personalForgotten({ device: 'pppp1111', keys: [HOST_KEY] })]);
    expect(once.models.personalData.receivers(HOST_KEY)).toEqual([]);
  });
});
