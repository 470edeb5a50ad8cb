import { listFiles } from './profile-layout';

export const AVATAR_STEMS = ['avatar', 'profile', 'profile-image', 'profile_image', 'agent', 'icon'];
export const AVATAR_EXTS = ['.png', '.jpg', '.jpeg', '.webp', '.gif'];

/** The profile's avatar: the first conventional image name among its direct regular files (case-insensitive). */
export function findAvatar(home: string): string | null {
  const byLower = new Map<string, string>();
  for (const f of listFiles(home).sort()) if (!byLower.has(f.toLowerCase())) byLower.set(f.toLowerCase(), f);
  for (const stem of AVATAR_STEMS)
    for (const ext of AVATAR_EXTS) {
      const f = byLower.get(`${stem}${ext}`);
      if (f) return f;
    }
  return null;
}

/** The image type its bytes say (never the file name's). */
export function imageType(b: Buffer): string | null {
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 6 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a')) return 'image/gif';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}
