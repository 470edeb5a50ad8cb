import { JsonlLogSource, plural, type LogSource } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { svcHomeFrom } from '../common/config/config';
import { castFiles, digestFile, recordingFile, recordingsDir } from '../terminal/recording-files';
import { colours, EXIT, line, type CliIo } from './io';

/** `svc relay events verify`'s check of the terminal recordings against the digests the log holds. */
export type RecordingsVerdict = {
  ok: boolean;
  /** The recordings directory checked; null when the log is not in a relay home (an export, a bare copy). */
  dir: string | null;
  /** Recordings the log vouches for (saved, not removed). */
  saved: number;
  /** Recordings the log vouches for that are still on disk, each hashed. */
  checked: number;
  /** On disk but not the bytes the log vouches for. */
  changed: Array<{ recording_id: string; expected_sha256: string; actual_sha256: string; expected_bytes: number; actual_bytes: number }>;
  /** Saved in the log, not removed by the relay, and gone from disk. */
  missing: string[];
  /** Removed by the relay: past the total cap, its device's content forgotten, or found gone at a start (`missing`, said in the log). */
  removed: { space: number; forgotten: number; missing: string[] };
  /** Files without a saved event: a shell still running, or one a stopped relay left (saved at its next start). */
  unsaved: string[];
};

type Saved = { sha256: string; sizeBytes: number };

/** The recordings beside a log: `<home>/relay/recordings` of a file log in a relay home, SVC_HOME's for a database log. */
export function recordingsDirOf(source: LogSource, env: NodeJS.ProcessEnv): string | null {
  if (source instanceof JsonlLogSource) return null;
  if (source.kind === 'postgres') return recordingsDir(svcHomeFrom(env));
  return path.basename(source.location) === 'events' ? path.join(path.dirname(source.location), 'recordings') : null;
}

/** Reads the recording events of a log whose chain was just proven, then hashes each recording still present. */
export async function verifyRecordings(source: LogSource, env: NodeJS.ProcessEnv): Promise<RecordingsVerdict> {
  const saved = new Map<string, Saved>();
  const removed = new Map<string, 'space' | 'forgotten' | 'missing'>();
  for await (const page of source.pages()) {
    for (const raw of page) {
      if (!raw.includes('"terminal.recording_')) continue;
      const e = JSON.parse(raw) as { type: string; data: Record<string, unknown> };
      const id = String(e.data.recordingId);
      if (e.type === 'terminal.recording_saved') {
        saved.set(id, { sha256: String(e.data.sha256), sizeBytes: Number(e.data.sizeBytes) });
        removed.delete(id);
      } else if (e.type === 'terminal.recording_removed') {
        removed.set(id, e.data.reason === 'missing' || e.data.reason === 'forgotten' ? e.data.reason : 'space');
        saved.delete(id);
      }
    }
  }
  const dir = recordingsDirOf(source, env);
  const verdict: RecordingsVerdict = {
    ok: true,
    dir,
    saved: saved.size,
    checked: 0,
    changed: [],
    missing: [],
    removed: {
      space: [...removed.values()].filter((r) => r === 'space').length,
      forgotten: [...removed.values()].filter((r) => r === 'forgotten').length,
      missing: [...removed].filter(([, r]) => r === 'missing').map(([id]) => id),
    },
    unsaved: [],
  };
  if (dir === null) return verdict;
  const onDisk = new Set(castFiles(dir));
  for (const [id, expected] of saved) {
    const file = recordingFile(dir, id);
    if (!onDisk.has(id) || !fs.existsSync(file)) {
      verdict.missing.push(id);
      continue;
    }
    const actual = await digestFile(file);
    verdict.checked++;
    if (actual.sha256 !== expected.sha256 || actual.sizeBytes !== expected.sizeBytes)
      verdict.changed.push({
        recording_id: id,
        expected_sha256: expected.sha256,
        actual_sha256: actual.sha256,
        expected_bytes: expected.sizeBytes,
        actual_bytes: actual.sizeBytes,
      });
  }
  verdict.unsaved = [...onDisk].filter((id) => !saved.has(id) && !removed.has(id));
  verdict.ok = verdict.changed.length === 0 && verdict.missing.length === 0;
  return verdict;
}

/** The verdict in words: stdout when it holds, stderr naming each recording when it does not. */
export function printRecordings(io: CliIo, v: RecordingsVerdict): number {
  const c = colours(io.stdout, io.env);
  if (v.saved === 0 && v.unsaved.length === 0 && v.removed.space === 0 && v.removed.forgotten === 0 && v.removed.missing.length === 0) return EXIT.ok;
  if (v.dir === null) {
    line(
      io.stdout,
      `${c.yellow('note')} ${plural(v.saved, 'terminal recording')} not checked: this log is not in a relay home (no recordings directory beside it)`,
    );
    return EXIT.ok;
  }
  if (v.ok) line(io.stdout, `${c.green('ok')}  ${plural(v.checked, 'terminal recording')} match their digests in the log (${v.dir})`);
  if (v.removed.space > 0 || v.removed.forgotten > 0 || v.removed.missing.length > 0)
    line(
      io.stdout,
      `    removed by the relay: ${v.removed.space} past the total cap${v.removed.forgotten ? `, ${v.removed.forgotten} forgotten with their device's content` : ''}${v.removed.missing.length ? `, ${v.removed.missing.length} found gone at a start (${v.removed.missing.join(', ')})` : ''}`,
    );
  if (v.unsaved.length > 0)
    line(
      io.stdout,
      `${c.yellow('note')} ${plural(v.unsaved.length, 'recording')} without a saved event yet (a shell still running, or saved at the next start): ${v.unsaved.join(', ')}`,
    );
  if (v.ok) return EXIT.ok;
  const e = colours(io.stderr, io.env);
  line(io.stderr, `${e.red('RECORDINGS')}  ${v.dir}`);
  for (const x of v.changed)
    line(
      io.stderr,
      `changed: ${x.recording_id}.cast: expected sha256 ${x.expected_sha256} (${x.expected_bytes} bytes), actual ${x.actual_sha256} (${x.actual_bytes} bytes)`,
    );
  for (const id of v.missing) line(io.stderr, `gone: ${id}.cast is saved in the log, but the file is missing and the relay never removed it`);
  return EXIT.failed;
}
