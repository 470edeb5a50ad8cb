import { isoMs } from '../epoch';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import type { Projection, RecordingStopReason, StoredEvent, StoredRelayEvent } from '@svc/events';

type MutableSavedRecording = {
  recordingId: string;
  shellId: string;
  sessionName: string;
  tokenPrefix: string;
  deviceId: string;
  startedAt: number;
  durationMs: number;
  sizeBytes: number;
  sha256: string;
  /** The data key its content is sealed under; null: a plain file (an older log). */
  sealedWith: string | null;
  input: boolean;
  truncated: boolean;
  /** Why it stopped before its shell ended (null: it did not, or an older log does not say). */
  stopped: RecordingStopReason | null;
  recovered: boolean;
  savedAt: number;
  /** The saved event's seq: the order among recordings that started at the same time. */
  seq: number;
};

type MutableRecordedShell = { shellId: string; sessionName: string; tokenPrefix: string; deviceId: string };

/** A recording on disk that the log vouches for (saved, not removed since); read-only outside this projection. */
export type SavedRecording = DeepReadonly<MutableSavedRecording>;
/** Who a shell belonged to: what a recording left by a crash is saved under. */
export type RecordedShell = DeepReadonly<MutableRecordedShell>;

type State = { saved: MutableSavedRecording[]; open: MutableRecordedShell[]; orphaned: MutableRecordedShell[]; forgotten?: string[] };

/** How many recordings removed as forgotten the model remembers (so the console can say so rather than "unknown"). */
export const FORGOTTEN_KEPT = 500;

/**
 * Terminal recordings (`terminal.recording_saved` minus `terminal.recording_removed`), for the console
 * and the total cap. Also which shells were open when the previous run ended (`orphaned`, replaced at each
 * `relay.started`): their recordings are saved at start-up under the shell's device.
 */
export class TerminalRecordingsProjection implements Projection<State> {
  private readonly saved = new Map<string, MutableSavedRecording>();
  private readonly open = new Map<string, MutableRecordedShell>();
  private orphaned = new Map<string, MutableRecordedShell>();
  private forgotten: string[] = [];

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'relay.started':
        this.orphaned = new Map(this.open);
        this.open.clear();
        break;
      case 'terminal.opened': {
        const d = e.data;
        this.open.set(d.shellId, { shellId: d.shellId, sessionName: d.sessionName, tokenPrefix: d.tokenPrefix, deviceId: d.deviceId });
        break;
      }
      case 'terminal.closed':
        this.open.delete(e.data.shellId);
        break;
      case 'terminal.recording_saved': {
        const d = e.data;
        this.saved.set(d.recordingId, {
          recordingId: d.recordingId,
          shellId: d.shellId,
          sessionName: d.sessionName,
          tokenPrefix: d.tokenPrefix,
          deviceId: d.deviceId,
          startedAt: isoMs(d.startedAt),
          durationMs: d.durationMs,
          sizeBytes: d.sizeBytes,
          sha256: d.sha256,
          sealedWith: d.sealedWith ?? null,
          input: d.input,
          truncated: d.truncated,
          stopped: d.stopped ?? null,
          recovered: d.recovered === true,
          savedAt: eventAtMs(e),
          seq: e.seq,
        });
        this.orphaned.delete(d.shellId);
        break;
      }
      case 'terminal.recording_removed':
        this.saved.delete(e.data.recordingId);
        if (e.data.reason === 'forgotten' && !this.forgotten.includes(e.data.recordingId)) {
          this.forgotten.push(e.data.recordingId);
          if (this.forgotten.length > FORGOTTEN_KEPT) this.forgotten.shift();
        }
        break;
      default:
        break;
    }
  }

  get(recordingId: string): SavedRecording | undefined {
    return this.saved.get(recordingId);
  }

  /** Newest first (the console's list; the total cap removes from the end). */
  list(): readonly SavedRecording[] {
    return [...this.saved.values()].sort((a, b) => b.startedAt - a.startedAt || b.seq - a.seq);
  }

  /** Removed because its device's content was forgotten (one of the last FORGOTTEN_KEPT). */
  wasForgotten(recordingId: string): boolean {
    return this.forgotten.includes(recordingId);
  }

  totalBytes(): number {
    let n = 0;
    for (const r of this.saved.values()) n += r.sizeBytes;
    return n;
  }

  /** A shell that was open when the previous run of the relay ended. */
  orphan(shellId: string): RecordedShell | undefined {
    return this.orphaned.get(shellId);
  }

  snapshot(): State {
    return {
      saved: [...this.saved.values()].map((r) => ({ ...r })),
      open: [...this.open.values()].map((s) => ({ ...s })),
      orphaned: [...this.orphaned.values()].map((s) => ({ ...s })),
      forgotten: [...this.forgotten],
    };
  }

  restore(state: State): void {
    this.saved.clear();
    this.open.clear();
    this.orphaned = new Map();
    for (const r of state.saved ?? []) this.saved.set(r.recordingId, { ...r, stopped: r.stopped ?? null, sealedWith: r.sealedWith ?? null });
    for (const s of state.open ?? []) this.open.set(s.shellId, { ...s });
    for (const s of state.orphaned ?? []) this.orphaned.set(s.shellId, { ...s });
    this.forgotten = [...(state.forgotten ?? [])];
  }
}
