import { clipboardStaged } from '../../../../test/support/events';
import { at, given, T0, type Decision } from '../../../../test/support/given';
import {
  CLIPBOARD_MAX_BYTES,
  consumeEntry,
  consumeLatest,
  discardEntries,
  discardStale,
  inboxFileName,
  magicMatches,
  stageImage,
  type Stage,
} from './clipboard';

const image = (entryId: string, sizeBytes = 1024): Stage => ({
  entryId,
  fileName: `${entryId}.png`,
  format: 'png',
  sizeBytes,
  sha256: '0'.repeat(64),
  tokenPrefix: 'aaaa1111',
});
const stage =
  (entryId: string, sizeBytes?: number): Decision =>
  (m, now) =>
    stageImage(m, image(entryId, sizeBytes), now);
const consumed = (entryId: string) => ({ type: 'clipboard.consumed' as const, data: { entryId, by: 'operator' } });

describe('clipboard rules', () => {
  it('a filename hint never names a directory', () => {
    const id = '0123456789abcdef';
    expect(inboxFileName(id, 'png', 'shot.png')).toBe(`${id}-shot.png`);
    expect(inboxFileName(id, 'jpeg', 'Photo 1.JPG')).toBe(`${id}-Photo_1.jpg`);
    expect(inboxFileName(id, 'png', '../../etc/passwd')).toBe(`${id}-passwd.png`);
    expect(inboxFileName(id, 'png', '..\\..\\x.png')).toBe(`${id}-x.png`);
    expect(inboxFileName(id, 'png', '..')).toBe(`${id}.png`);
    expect(inboxFileName(id, 'png', '.bashrc')).toBe(`${id}-bashrc.png`);
    expect(inboxFileName(id, 'gif', undefined)).toBe(`${id}.gif`);
    for (const hint of ['a/../../b', '/abs/path', '\0', '....', 'x'.repeat(500), 'ü.png']) {
      expect(inboxFileName(id, 'webp', hint)).toMatch(/^[0-9a-f]{16}(-[A-Za-z0-9][A-Za-z0-9._-]{0,63})?\.webp$/);
    }
  });

  it('checks signatures', () => {
    expect(magicMatches('png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]))).toBe(true);
    expect(magicMatches('png', Buffer.from([0x89, 0x50, 0x4e]))).toBe(false);
    expect(magicMatches('jpeg', Buffer.from([0xff, 0xd8, 0xff, 0xdb]))).toBe(true);
    expect(magicMatches('gif', Buffer.from('GIF87a'))).toBe(true);
    expect(magicMatches('gif', Buffer.from('GIF88a'))).toBe(false);
    expect(magicMatches('webp', Buffer.from('RIFF\0\0\0\0WEBP'))).toBe(true);
    expect(magicMatches('webp', Buffer.from('RIFF\0\0\0\0AVI '))).toBe(false);
    // A wire pin: WIRE.md "Notifications, clipboard": "413 past 25 MB".
    expect(CLIPBOARD_MAX_BYTES).toBe(25 * 1024 * 1024);
  });

  // WIRE.md: "25 MB per image, stale after 5 minutes"; a clipboard holds one thing.
  it('a new image supersedes the unread ones and goes stale 5 minutes later; an empty one or one past 25 MB is refused', () => {
    given([clipboardStaged({ entryId: 'i1' }), clipboardStaged({ entryId: 'i2' })])
      .when(stage('i3'), at(T0, 60))
      .then([{ type: 'clipboard.staged', data: { ...image('i3'), staleAt: at(T0, 360).toISOString(), supersedes: ['i1', 'i2'] } }]);
    given()
      .when(stage('i1', CLIPBOARD_MAX_BYTES))
      .then([clipboardStaged({ entryId: 'i1', sizeBytes: CLIPBOARD_MAX_BYTES })]);
    given()
      .when(stage('i1', CLIPBOARD_MAX_BYTES + 1))
      .thenThrows('clipboard.too_large', 'too_large');
    given().when(stage('i1', 0)).thenThrows('clipboard.empty', 'invalid');
  });

  it('a read is one-shot: the newest fresh image, or a named one until it is read or goes stale', () => {
    const latest: Decision = (m, now) => consumeLatest(m, 'operator', now);
    const named =
      (entryId: string): Decision =>
      (m, now) =>
        consumeEntry(m, entryId, 'operator', now);
    const g = given([clipboardStaged({ entryId: 'old' }), clipboardStaged({ entryId: 'new', staleAt: at(T0, 600).toISOString() })]);
    g.when(latest, at(T0, 299)).then([consumed('new')]);
    g.when(named('new'), at(T0, 299)).thenThrows('clipboard.empty_inbox', 'not_found');
    g.when(latest, at(T0, 300)).thenThrows('clipboard.empty_inbox', 'not_found');
    g.when(named('old'), at(T0, 300)).thenThrows('clipboard.empty_inbox', 'not_found');
    g.when(named('old'), at(T0, 299)).then([consumed('old')]);
    g.when(named('nobody'), T0).thenThrows('clipboard.empty_inbox', 'not_found');
  });

  it('the sweep discards stale images at their instant; a clear discards only what is still there', () => {
    const g = given([clipboardStaged({ entryId: 'a' }), clipboardStaged({ entryId: 'b', staleAt: at(T0, 600).toISOString() })]);
    g.when(discardStale, at(T0, 299)).then([]);
    g.when(discardStale, at(T0, 300)).then([{ type: 'clipboard.discarded', data: { entryId: 'a', reason: 'stale' } }]);
    g.when((m) => discardEntries(m, ['a', 'b'], 'cleared')).then([{ type: 'clipboard.discarded', data: { entryId: 'b', reason: 'cleared' } }]);
    expect(g.models.clipboardInbox.all()).toEqual([]);
  });
});
