import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { messageDelivered, messagePosted } from '../../../../test/support/events';
import { Given, T0 } from '../../../../test/support/given';
import { FileKeyStore } from './key-store';
import { PersonalSealer } from './personal-sealer';

/** Posts a message for no phone, then has it delivered to `phone`: the key it went under. */
function postAndDeliver(sealer: PersonalSealer, g: Given, id: string, phone: string): string {
  const message = messagePosted({ messageId: id, chatId: 'ops', text: 'x' });
  const sealed = sealer.seal([message], g.models, T0)!;
  // The store puts the open form back after stamping: the message as posted, with the key it went under.
  const sealedWith = String(sealed.opened[0]!.sealedWith);
  g.apply([messagePosted({ ...message.data, sealedWith }), messageDelivered({ messageId: id, chatId: 'ops', connId: 'c', tokenPrefix: phone })]);
  return sealedWith;
}

describe('PersonalSealer: a key another device received content under is not used again', () => {
  it('the next message for no phone gets a fresh host key, up to the per-hour bound, then the last one is used again', () => {
    const keys = FileKeyStore.open(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sealer-')));
    const sealer = new PersonalSealer(keys, 3);
    const g = new Given();
    const used = ['p1', 'p2', 'p3', 'p4', 'p5'].map((id, i) => postAndDeliver(sealer, g, id, i % 2 ? 'pppp1111' : 'qqqq2222'));
    expect(new Set(used).size).toBe(3);
    expect(used.slice(0, 3)).toEqual([...new Set(used)]);
    expect(used[4]).toBe(used[3]);
    expect(used.every((k) => k.startsWith('host:2026-03-01T12:'))).toBe(true);
    expect(keys.count('host:2026-03-01T12')).toBe(3);
  });
});
