/**
 * What an upload is, told by its first bytes, never by its name or Content-Type. Only the containers the
 * app, browsers and the desktop CLI record are known; anything else (a playlist, a concat script, an
 * image, text) is refused before any decoder sees it, so ffmpeg is never asked to guess a format.
 */
export type AudioContainer = 'wav' | 'mp3' | 'ogg' | 'flac' | 'mp4' | 'matroska' | 'aac' | 'amr';

/** ffmpeg's demuxer for each container: forced with `-f` and the only entry of `-format_whitelist`. */
export const FFMPEG_DEMUXER: Readonly<Record<AudioContainer, string>> = {
  wav: 'wav',
  mp3: 'mp3',
  ogg: 'ogg',
  flac: 'flac',
  mp4: 'mov', // mov,mp4,m4a,3gp,3g2,mj2: external data references (drefs) stay off, ffmpeg's default
  matroska: 'matroska', // matroska,webm
  aac: 'aac', // raw ADTS
  amr: 'amr',
};

export const KNOWN_AUDIO = 'WAV, MP3, Ogg (Opus, Vorbis), FLAC, MP4/M4A (AAC), WebM/Matroska, AAC (ADTS) or AMR';

/** MP4 and QuickTime top-level boxes a recording may start with. */
const MP4_BOXES = new Set(['ftyp', 'moov', 'mdat', 'free', 'skip', 'wide']);

export function sniffAudio(b: Buffer): AudioContainer | null {
  if (b.length < 12) return null;
  const ascii = (from: number, to: number) => b.toString('latin1', from, to);
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'wav';
  if (ascii(0, 4) === 'OggS') return 'ogg';
  if (ascii(0, 4) === 'fLaC') return 'flac';
  if (b.readUInt32BE(0) === 0x1a45dfa3) return 'matroska';
  if (ascii(0, 5) === '#!AMR') return 'amr';
  if (MP4_BOXES.has(ascii(4, 8))) return 'mp4';
  if (ascii(0, 3) === 'ID3') return 'mp3';
  if (b[0] === 0xff && (b[1] & 0xf6) === 0xf0) return 'aac'; // ADTS: sync, layer 00
  if (b[0] === 0xff && (b[1] & 0xe0) === 0xe0 && (b[1] & 0x06) !== 0) return 'mp3'; // MPEG audio frame sync, layer I-III
  return null;
}
