import { DomainError, type SavedRecording } from '@svc/domain';
import * as fs from 'node:fs';
import { Readable } from 'node:stream';
import { RECORDING_ID, recordingFile } from './recording-files';
import { openedCast, openedSize, sealedHead } from './sealed-cast';

/** What the console's player gets: the asciicast and its length. */
export type OpenedRecording = { body: Readable; size: number };

type Recordings = { get(recordingId: string): SavedRecording | undefined; wasForgotten(recordingId: string): boolean };

const forgotten = () =>
  new DomainError('terminal.recording_forgotten', 'not_found', "that recording was forgotten with its device's content: it can no longer be played");
const notFound = () => new DomainError('terminal.recording_not_found', 'not_found', 'no saved recording has that id');

/**
 * A saved recording as asciicast, by its listed id only (the path is the relay's own): a sealed one opened
 * under its data key chunk by chunk, a plain one (an older log) as it is. 404 `terminal.recording_forgotten`
 * once its device's content was forgotten (its key gone, or the recording removed for it), 404
 * `terminal.recording_not_found` otherwise, 409 `terminal.recording_damaged` for a file that does not open.
 */
export function openRecording(
  dir: string,
  recordingId: string,
  recordings: Recordings,
  keyFor: (keyId: string) => Buffer | undefined,
): OpenedRecording {
  if (!RECORDING_ID.test(recordingId)) throw notFound();
  const saved = recordings.get(recordingId);
  if (!saved) throw recordings.wasForgotten(recordingId) ? forgotten() : notFound();
  const key = saved.sealedWith ? keyFor(saved.sealedWith) : undefined;
  if (saved.sealedWith && !key) throw forgotten();
  const file = recordingFile(dir, recordingId);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    throw notFound();
  }
  if (!key) return { body: fs.createReadStream('', { fd }), size: fs.fstatSync(fd).size };
  try {
    const head = sealedHead(fd);
    const size = head && head.keyId === saved.sealedWith ? openedSize(fd, head.bodyStart) : null;
    if (size === null)
      throw new DomainError(
        'terminal.recording_damaged',
        'conflict',
        'the recording file does not open as it was saved: svc relay events verify names what changed',
      );
    return { body: Readable.from(openedCast(file, recordingId, key)), size };
  } finally {
    fs.closeSync(fd);
  }
}
