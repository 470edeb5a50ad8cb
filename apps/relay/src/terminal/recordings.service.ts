import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { RecordedShell, SavedRecording } from '@svc/domain';
import type { RecordingStopReason, TerminalRecordingRemoved, TerminalRecordingSaved } from '@svc/events';
import * as fs from 'node:fs';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/clock';
import type { RelayConfig, TerminalRecordingConfig } from '../common/config';
import { CommandLoop } from '../common/command-loop';
import { DiskGuard } from '../common/disk-guard';
import { LOGGER, RELAY_CONFIG } from '../common/tokens';
import { Recording, type ShellRecorder } from './recording';
import { castFiles, RECORDING_ID, recordingFile, recordingsDir, recoverCast } from './recording-files';
import { RecordingSpace } from './recording-space';

/** The TERM every shell gets (shell-process.ts), in each recording's header. */
const TERM = 'xterm-256color';

type Live = { recording: Recording; owner: RecordedShell; startedAt: Date };

/**
 * Terminal recordings (RELAY_TERMINAL_RECORDING): one asciicast file per shell under
 * `<home>/relay/recordings`, its `terminal.recording_saved` once the shell ends, the total cap over saved
 * and live recordings (oldest saved out first, each removal an event; a live one that cannot grow stops),
 * the disk guard's reserve, and at start-up the files a stopped relay left without their event.
 */
@Injectable()
export class RecordingsService implements OnApplicationBootstrap, OnModuleDestroy {
  readonly dir: string;
  private readonly live = new Map<string, Live>();
  private readonly space: RecordingSpace;
  private readonly subs: Subscription[] = [];

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly disk: DiskGuard,
  ) {
    this.dir = recordingsDir(config.svcHome);
    this.space = new RecordingSpace({
      totalBytes: () => this.settings.totalBytes,
      savedBytes: () => this.loop.models.terminalRecordings.totalBytes(),
      removeOldest: () => this.removeOldest(),
    });
    // Applied and published in one step: from here the log counts the recording's bytes, not its claim.
    this.subs.push(loop.bus.ofType('terminal.recording_saved').subscribe((e) => this.space.release(e.data.recordingId)));
  }

  onModuleDestroy(): void {
    for (const s of this.subs) s.unsubscribe();
  }

  get settings(): TerminalRecordingConfig {
    return this.config.terminalRecording;
  }

  /** Starts recording a shell about to spawn (null when recording is off or its file cannot be made). */
  begin(owner: RecordedShell, shell: { shell: string; cols: number; rows: number }): ShellRecorder | null {
    if (!this.settings.enabled) return null;
    const startedAt = this.clock.now();
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const recording = new Recording({
        file: recordingFile(this.dir, owner.shellId),
        header: {
          width: shell.cols,
          height: shell.rows,
          timestamp: Math.floor(startedAt.getTime() / 1000),
          shell: shell.shell,
          term: TERM,
          title: `${owner.sessionName} (${owner.tokenPrefix})`,
        },
        maxBytes: this.settings.maxBytes,
        input: this.settings.input,
        admit: (bytes) => this.admit(owner.shellId, bytes),
        onStop: (reason) => this.logger.warn({ shellId: owner.shellId, reason }, 'terminal recording stopped; its shell goes on'),
        onError: (err) => this.logger.error({ shellId: owner.shellId, err: err.message }, 'terminal recording write failed; it stops here'),
      });
      this.live.set(owner.shellId, { recording, owner, startedAt });
      return recording;
    } catch (err) {
      this.logger.error({ shellId: owner.shellId, err: (err as Error).message }, 'terminal recording not started');
      return null;
    }
  }

  /** The shell was never opened: its file goes, nothing is recorded. */
  async abandon(shellId: string): Promise<void> {
    const live = this.live.get(shellId);
    if (!live) return;
    this.live.delete(shellId);
    await live.recording.discard().catch((err: Error) => this.logger.warn({ shellId, err: err.message }, 'recording not removed'));
    this.space.release(shellId);
  }

  /** Whether a live recording's next bytes may reach its file: not below the disk guard's reserve, not past the total cap. */
  private async admit(shellId: string, bytes: number): Promise<RecordingStopReason | null> {
    if (this.disk.low) return 'disk_low';
    return (await this.space.claim(shellId, bytes)) ? null : 'total_bytes';
  }

  /** The shell ended: the file is flushed and fsynced, then `terminal.recording_saved` vouches for it. */
  async end(shellId: string): Promise<void> {
    const live = this.live.get(shellId);
    if (!live) return;
    this.live.delete(shellId);
    try {
      await this.saveEnded(shellId, live);
    } finally {
      this.space.release(shellId);
    }
  }

  private async saveEnded(shellId: string, { recording, owner, startedAt }: Live): Promise<void> {
    let result;
    try {
      result = await recording.finish();
    } catch (err) {
      // A failed write: what reached the file is what the event vouches for.
      this.logger.error({ shellId, err: (err as Error).message }, 'terminal recording incomplete');
      const file = recordingFile(this.dir, shellId);
      if (!fs.existsSync(file)) return;
      const stopped: RecordingStopReason = recording.stopped ?? 'write_failed';
      result = { ...(await recoverCast(file)), truncated: true, stopped, input: this.settings.input };
    }
    await this.save({
      recordingId: shellId,
      ...owner,
      startedAt: startedAt.toISOString(),
      durationMs: Math.max(0, result.durationMs),
      sizeBytes: result.sizeBytes,
      sha256: result.sha256,
      input: result.input,
      truncated: result.truncated,
      ...(result.stopped ? { stopped: result.stopped } : {}),
    });
  }

  /** Saved and not removed, newest first. */
  list(): SavedRecording[] {
    return this.loop.models.terminalRecordings.list();
  }

  /** The file of a saved recording, or null (an id that is not one, unknown, removed, or its file gone). */
  fileOf(recordingId: string): { file: string; recording: SavedRecording } | null {
    if (!RECORDING_ID.test(recordingId)) return null;
    const recording = this.loop.models.terminalRecordings.get(recordingId);
    if (!recording) return null;
    const file = recordingFile(this.dir, recordingId);
    return fs.existsSync(file) ? { file, recording } : null;
  }

  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.recoverAtStart();
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'terminal recordings not checked at start');
    }
  }

  /**
   * Before any shell runs: a saved recording whose file is gone is recorded as removed (`missing`); a file
   * without its saved event (the relay stopped while its shell ran) is saved as `recovered`; then the cap.
   */
  private async recoverAtStart(): Promise<void> {
    const models = this.loop.models.terminalRecordings;
    const onDisk = new Set(castFiles(this.dir));
    for (const r of models.list())
      if (!onDisk.has(r.recordingId))
        await this.loop.record('system', [{ type: 'terminal.recording_removed', data: { recordingId: r.recordingId, reason: 'missing' } }]);
    for (const id of onDisk) {
      if (models.get(id)) continue;
      const file = recordingFile(this.dir, id);
      fs.chmodSync(file, 0o600);
      const found = await recoverCast(file);
      const owner = models.orphan(id) ?? { shellId: id, sessionName: '', tokenPrefix: '', deviceId: '' };
      const startedAt = new Date(found.startedAtMs ?? fs.statSync(file).mtimeMs);
      this.logger.warn({ recordingId: id, sizeBytes: found.sizeBytes, tornBytes: found.tornBytes }, 'terminal recording recovered');
      await this.save(
        {
          recordingId: id,
          ...owner,
          startedAt: startedAt.toISOString(),
          durationMs: found.durationMs,
          sizeBytes: found.sizeBytes,
          sha256: found.sha256,
          input: this.settings.input,
          truncated: found.tornBytes > 0,
          recovered: true,
        },
        false,
      );
    }
    await this.space.trim();
  }

  private async save(data: TerminalRecordingSaved['data'], cap = true): Promise<void> {
    try {
      await this.loop.record('system', [{ type: 'terminal.recording_saved', data }]);
    } catch (err) {
      this.logger.error({ recordingId: data.recordingId, err: (err as Error).message }, 'terminal recording not recorded');
      return;
    }
    this.logger.info({ recordingId: data.recordingId, shellId: data.shellId, sizeBytes: data.sizeBytes }, 'terminal recording saved');
    if (cap) await this.space.trim();
  }

  /** The oldest saved recording goes to make room (RELAY_TERMINAL_RECORDINGS_TOTAL_MB): false when none is left. */
  private removeOldest(): Promise<boolean> {
    const oldest = this.loop.models.terminalRecordings.list().at(-1);
    return oldest ? this.remove(oldest, 'space') : Promise.resolve(false);
  }

  /** The file first, then its event (a relay stopped in between records it as `missing` at its next start). */
  private async remove(r: SavedRecording, reason: TerminalRecordingRemoved['data']['reason']): Promise<boolean> {
    try {
      await fs.promises.unlink(recordingFile(this.dir, r.recordingId));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.logger.error({ recordingId: r.recordingId, err: (err as Error).message }, 'terminal recording not removed');
        return false;
      }
    }
    try {
      await this.loop.record('system', [{ type: 'terminal.recording_removed', data: { recordingId: r.recordingId, reason } }]);
    } catch (err) {
      this.logger.error({ recordingId: r.recordingId, err: (err as Error).message }, 'terminal recording removal not recorded');
      return false;
    }
    this.logger.info({ recordingId: r.recordingId, sizeBytes: r.sizeBytes, reason }, 'terminal recording removed');
    return true;
  }
}
