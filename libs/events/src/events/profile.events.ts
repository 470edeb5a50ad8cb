import type { Ev } from '../event';

/**
 * A profile file was written through the relay (`PUT /api/profiles/{name}/soul|memory/{filename}`). The
 * file is the state; the event is its audit: which file, its new SHA-256 and size, never its text.
 */
export type ProfileFileWritten = Ev<'profile.file_written', { profile: string; file: string; sha256: string; bytes: number; replaced: boolean }>;

export type ProfileEvent = ProfileFileWritten;
