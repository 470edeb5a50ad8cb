import { CLIPBOARD_MAX_BYTES, inboxFileName, magicMatches } from './clipboard';

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
});
