import { ReadModels } from '@svc/domain';
import type { NewEvent, PhoneMessagePosted } from '@svc/events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { given, T0 } from '../../../../test/support/given';
import { FileKeyStore } from './key-store';
import { PersonalSealer } from './personal-sealer';

const post = (messageId: string): NewEvent => ({
  type: 'phone.message_posted',
  data: { messageId, chatId: 'ops', text: 'x', title: null, surfacing: null, replyTo: null, metadata: null, expiresAt: '2026-03-02T12:00:00.000Z' },
});

/** Posts a message for no phone, then has it delivered to `phone`: the key it went under. */
function postAndDeliver(sealer: PersonalSealer, m: ReadModels, id: string, phone: string): string {
  const sealed = sealer.seal([post(id)], m, T0)!;
  given(m, [{ type: 'phone.message_posted', data: sealed.opened[0] as PhoneMessagePosted['data'] }]);
  given(m, [{ type: 'phone.message_delivered', data: { messageId: id, chatId: 'ops', connId: 'c', tokenPrefix: phone, queued: true } }]);
  return String(sealed.opened[0]!.sealedWith);
}

describe('PersonalSealer: a key another device received content under is not used again', () => {
  it('the next message for no phone gets a fresh host key, up to the per-hour bound, then the last one is used again', () => {
    const keys = FileKeyStore.open(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sealer-')));
    const sealer = new PersonalSealer(keys, 3);
    const m = new ReadModels();
    const used = ['p1', 'p2', 'p3', 'p4', 'p5'].map((id, i) => postAndDeliver(sealer, m, id, i % 2 ? 'pppp1111' : 'qqqq2222'));
    expect(new Set(used).size).toBe(3);
    expect(used.slice(0, 3)).toEqual([...new Set(used)]);
    expect(used[4]).toBe(used[3]);
    expect(used.every((k) => k.startsWith('host:2026-03-01T12:'))).toBe(true);
    expect(keys.count('host:2026-03-01T12')).toBe(3);
  });
});
