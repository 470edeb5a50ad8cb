import * as fs from 'node:fs';
import * as path from 'node:path';
import { openChunk, sealedHead, walkChunks } from '../../apps/relay/src/terminal/sealed-cast';
import { homeKeyFor } from './personal-keys';

/** A recording's file under a relay home. */
export const recordingPath = (home: string, recordingId: string): string => path.join(home, 'relay', 'recordings', `${recordingId}.cast`);

/**
 * The asciicast text of a recording as an auditor with the home (and so its data keys) reads it: a sealed
 * file's whole chunks opened (a chunk still being written is left out), a plain file as it is. Null when its
 * key is gone.
 */
export function openedCastText(home: string, recordingId: string): string | null {
  const file = recordingPath(home, recordingId);
  const fd = fs.openSync(file, 'r');
  try {
    const head = sealedHead(fd);
    if (!head) return fs.readFileSync(file, 'utf8');
    const key = homeKeyFor(home)(head.keyId);
    if (!key) return null;
    const { chunks } = walkChunks(fd, head.bodyStart);
    return chunks.map((c, i) => openChunk(fd, c, i, recordingId, head.keyId, key).toString('utf8')).join('');
  } finally {
    fs.closeSync(fd);
  }
}

/** The asciicast's lines, parsed. */
export const castLinesOf = (text: string): unknown[] =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as unknown);
