import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { RecordedShell, SavedRecording } from '@svc/domain';
import type { TerminalRecordingSaved } from '@svc/events';
import * as fs from 'node:fs';
import type { Logger } from 'pino';
import { Clock } from '../common/clock';
import type { RelayConfig, TerminalRecordingConfig } from '../common/config';
import { CommandLoop } from '../common/command-loop';
import { LOGGER, RELAY_CONFIG } from '../common/tokens';
import { Recording, type ShellRecorder } from './recording';
import { castFiles, RECORDING_ID, recordingFile, recordingsDir, recoverCast } from './recording-files';

/** The TERM every shell gets (shell-process.ts), in each recording's header. */
const TERM = 'xterm-256color';

type Live = { recording: Recording; owner: RecordedShell; startedAt: Date };

/**
 * Terminal recordings (RELAY_TERMINAL_RECORDING): one asciicast file per shell under
 * `<home>/relay/recordings`, its `terminal.recording_saved` once the shell ends, the total cap (oldest
 * out first, each removal an event), and at start-up the files a stopped relay left without their event.
 */
@Injectable()
export class RecordingsService implements OnApplicationBootstrap {
  readonly dir: string;
  private readonly live = new Map<string, Live>();
  /** Removals run one at a time, in the order they were asked for. */
  private capping: Promise<void> = Promise.resolve();

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.dir = recordingsDir(config.svcHome);
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
  }

  /** The shell ended: the file is flushed and fsynced, then `terminal.recording_saved` vouches for it. */
  async end(shellId: string): Promise<void> {
    const live = this.live.get(shellId);
    if (!live) return;
    this.live.delete(shellId);
    const { owner, startedAt } = live;
    let result;
    try {
      result = await live.recording.finish();
    } catch (err) {
      // A failed write: what reached the file is what the event vouches for.
      this.logger.error({ shellId, err: (err as Error).message }, 'terminal recording incomplete');
      const file = recordingFile(this.dir, shellId);
      if (!fs.existsSync(file)) return;
      result = { ...(await recoverCast(file)), truncated: true, input: this.settings.input };
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
    await this.cap();
  }

  private async save(data: TerminalRecordingSaved['data'], cap = true): Promise<void> {
    try {
      await this.loop.record('system', [{ type: 'terminal.recording_saved', data }]);
    } catch (err) {
      this.logger.error({ recordingId: data.recordingId, err: (err as Error).message }, 'terminal recording not recorded');
      return;
    }
    this.logger.info({ recordingId: data.recordingId, shellId: data.shellId, sizeBytes: data.sizeBytes }, 'terminal recording saved');
    if (cap) await this.cap();
  }

  /** Oldest first out until the saved recordings fit RELAY_TERMINAL_RECORDINGS_TOTAL_MB; each removal its own event. */
  private cap(): Promise<void> {
    this.capping = this.capping
      .then(async () => {
        const models = this.loop.models.terminalRecordings;
        while (models.totalBytes() > this.settings.totalBytes) {
          const oldest = models.list().at(-1)!;
          try {
            await fs.promises.unlink(recordingFile(this.dir, oldest.recordingId));
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
              this.logger.error({ recordingId: oldest.recordingId, err: (err as Error).message }, 'terminal recording not removed');
              return;
            }
          }
          await this.loop.record('system', [{ type: 'terminal.recording_removed', data: { recordingId: oldest.recordingId, reason: 'space' } }]);
          this.logger.info({ recordingId: oldest.recordingId, sizeBytes: oldest.sizeBytes }, 'terminal recording removed for space');
        }
      })
      .catch((err: Error) => this.logger.error({ err: err.message }, 'terminal recordings cap failed'));
    return this.capping;
  }
}
