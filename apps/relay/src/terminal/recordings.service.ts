import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { RecordedShell, SavedRecording } from '@svc/domain';
import {
  personalKeySlot,
  type PersonalDataForgotten,
  type RecordingStopReason,
  type TerminalRecordingRemoved,
  type TerminalRecordingSaved,
} from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/loop/clock';
import type { RelayConfig, TerminalRecordingConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { DiskGuard } from '../common/loop/disk-guard';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { forgetReaches } from '../personal/forget';
import { Recording, type ShellRecorder } from './recording';
import { castFiles, digestFile, recordingFile, recordingsDir, recoverRecording } from './recording-files';
import { openRecording, type OpenedRecording } from './recording-reader';
import { RecordingSpace } from './recording-space';
import { CastSealer, SEALING_SUFFIX, sealPlainFile } from './sealed-cast';

/** The TERM every shell gets (shell-process.ts), in each recording's header. */
const TERM = 'xterm-256color';
const HOUR_MS = 3_600_000;

type Live = {
  recording: Recording;
  owner: RecordedShell;
  startedAt: Date;
  /** The data key it is sealed under (null: written plain, a relay that seals nothing). */
  keyId: string | null;
  /** Its key was forgotten while it ran: once saved, it is removed. */
  forgotten: boolean;
  ending: boolean;
};

/**
 * Terminal recordings (RELAY_TERMINAL_RECORDING): one asciicast file per shell under `<home>/relay/recordings`,
 * sealed under the shell's device's data key for the hour it started (sealed-cast.ts), its
 * `terminal.recording_saved` once the shell ends, the total cap over saved and live recordings (oldest saved
 * out first, each removal an event; a live one that cannot grow stops), the disk guard's reserve, a device's
 * forgetting (its recordings removed, a live one stopped), and at start-up the files a stopped relay left.
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
    this.subs.push(loop.bus.ofType('personal.forgotten').subscribe((e) => this.onForgotten(e.data)));
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
      const key = this.loop.sealer?.keys.current(personalKeySlot(owner.tokenPrefix, startedAt)) ?? null;
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
        ...(key ? { sealer: new CastSealer(owner.shellId, key.id, key.key), ready: key.persisted ?? undefined } : {}),
        admit: (bytes) => this.admit(owner.shellId, bytes),
        onStop: (reason) => this.logger.warn({ shellId: owner.shellId, reason }, 'terminal recording stopped; its shell goes on'),
        onError: (err) => this.logger.error({ shellId: owner.shellId, err: err.message }, 'terminal recording write failed; it stops here'),
      });
      this.live.set(owner.shellId, { recording, owner, startedAt, keyId: key?.id ?? null, forgotten: false, ending: false });
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

  /**
   * The shell ended: the file is flushed and fsynced, then `terminal.recording_saved` vouches for it. It
   * stays among the live ones until saved, so a forgetting meanwhile finds it in one place or the other.
   */
  async end(shellId: string): Promise<void> {
    const live = this.live.get(shellId);
    if (!live || live.ending) return;
    live.ending = true;
    try {
      await this.saveEnded(shellId, live);
    } finally {
      this.live.delete(shellId);
      this.space.release(shellId);
    }
    if (live.forgotten) await this.space.exclusive(() => this.removeNow(shellId, 'forgotten'));
  }

  private async saveEnded(shellId: string, { recording, owner, startedAt, keyId }: Live): Promise<void> {
    let result;
    try {
      result = await recording.finish();
    } catch (err) {
      // A failed write: what reached the file is what the event vouches for.
      this.logger.error({ shellId, err: (err as Error).message }, 'terminal recording incomplete');
      const file = recordingFile(this.dir, shellId);
      if (!fs.existsSync(file)) return;
      const stopped: RecordingStopReason = recording.stopped ?? 'write_failed';
      result = { ...(await recoverRecording(file, shellId, (id) => this.keyFor(id))), truncated: true, stopped, input: this.settings.input };
    }
    await this.save({
      recordingId: shellId,
      ...owner,
      startedAt: startedAt.toISOString(),
      durationMs: Math.max(0, result.durationMs),
      sizeBytes: result.sizeBytes,
      sha256: result.sha256,
      ...(keyId ? { sealedWith: keyId } : {}),
      input: result.input,
      truncated: result.truncated,
      ...(result.stopped ? { stopped: result.stopped } : {}),
    });
  }

  /** Saved and not removed, newest first. */
  list(): readonly SavedRecording[] {
    return this.loop.models.terminalRecordings.list();
  }

  /** A saved recording's asciicast for the console's player (opened under its key when sealed). */
  open(recordingId: string): OpenedRecording {
    return openRecording(this.dir, recordingId, this.loop.models.terminalRecordings, (id) => this.keyFor(id));
  }

  /** A data key that is still held and not named by the last forgetting (whose destruction may be under way). */
  private keyFor(keyId: string): Buffer | undefined {
    if (this.loop.models.personalData.lastKeys().includes(keyId)) return undefined;
    return this.loop.sealer?.keys.get(keyId);
  }

  /**
   * A forgetting reaches recordings: the ones sealed under a destroyed key, and older plain ones of the
   * device and hours it names, are removed; a live one under a destroyed key stops at once (nothing more
   * is written) and is removed once saved.
   */
  private onForgotten(f: PersonalDataForgotten['data']): void {
    const gone = new Set(f.keys);
    for (const live of this.live.values()) {
      if (!live.keyId || !gone.has(live.keyId)) continue;
      live.forgotten = true;
      live.recording.stop('forgotten', true);
    }
    const scope = { device: f.device, before: f.before === null ? null : Date.parse(f.before) };
    void this.removeForgotten((r) => (r.sealedWith ? gone.has(r.sealedWith) : forgetReaches(scope, r.tokenPrefix, hourOf(r.startedAt))));
  }

  private removeForgotten(reached: (r: SavedRecording) => boolean): Promise<void> {
    return this.space
      .exclusive(async () => {
        for (const r of this.list()) if (reached(r)) await this.removeNow(r.recordingId, 'forgotten');
      })
      .catch((err: Error) => this.logger.error({ err: err.message }, 'forgotten terminal recordings not removed'));
  }

  /** Whether a saved recording's content was forgotten: its key gone, or (plain) a later forgetting reaches it. */
  private forgotten(r: SavedRecording): boolean {
    if (r.sealedWith) return this.loop.sealer !== undefined && this.keyFor(r.sealedWith) === undefined;
    return this.loop.models.personalData
      .recent()
      .some(
        (f) =>
          f.seq > r.seq &&
          forgetReaches({ device: f.device, before: f.before === null ? null : Date.parse(f.before) }, r.tokenPrefix, hourOf(r.startedAt)),
      );
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
   * without its saved event (the relay stopped while its shell ran) is saved as `recovered`; what was
   * forgotten while the relay was down goes (`forgotten`); then the cap.
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
      const found = await recoverRecording(file, id, (k) => this.keyFor(k));
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
          ...(found.keyId ? { sealedWith: found.keyId } : {}),
          input: this.settings.input,
          truncated: found.tornBytes > 0,
          recovered: true,
        },
        false,
      );
    }
    await this.removeForgotten((r) => this.forgotten(r));
    await this.sealOlder();
    await this.space.trim();
  }

  /**
   * Recordings saved before recordings were sealed (plain asciicast) are sealed once, under their device's
   * data key for the hour they started (`host`'s for one whose device is unknown), and saved again: the log
   * then vouches for the sealed bytes, and forgetting the device reaches them like any other.
   */
  private async sealOlder(): Promise<void> {
    const keys = this.loop.sealer?.keys;
    if (!keys) return;
    for (const f of fs.existsSync(this.dir) ? fs.readdirSync(this.dir) : [])
      if (f.endsWith(SEALING_SUFFIX)) fs.rmSync(path.join(this.dir, f), { force: true });
    for (const r of this.list()) {
      if (r.sealedWith) continue;
      const file = recordingFile(this.dir, r.recordingId);
      try {
        const { id, key, persisted } = keys.current(personalKeySlot(r.tokenPrefix || 'host', new Date(r.startedAt)));
        await persisted;
        const sealedWith = sealPlainFile(file, r.recordingId, id, key);
        const { sha256, sizeBytes } = await digestFile(file);
        const { seq: _seq, savedAt: _at, stopped, ...rest } = r;
        await this.save(
          { ...rest, startedAt: new Date(r.startedAt).toISOString(), sha256, sizeBytes, sealedWith, ...(stopped ? { stopped } : {}) },
          false,
        );
        this.logger.info({ recordingId: r.recordingId }, 'terminal recording from before sealing sealed under its device key');
      } catch (err) {
        this.logger.error({ recordingId: r.recordingId, err: (err as Error).message }, 'terminal recording from before sealing not sealed');
      }
    }
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
    const oldest = this.list().at(-1);
    return oldest ? this.removeNow(oldest.recordingId, 'space') : Promise.resolve(false);
  }

  /**
   * Removes a saved recording, under the space's turn (so the cap and a forgetting never remove one twice):
   * the file first, then its event (a relay stopped in between records it as `missing` at its next start).
   */
  private async removeNow(recordingId: string, reason: TerminalRecordingRemoved['data']['reason']): Promise<boolean> {
    const r = this.loop.models.terminalRecordings.get(recordingId);
    if (!r) return false;
    try {
      await fs.promises.unlink(recordingFile(this.dir, recordingId));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.logger.error({ recordingId, err: (err as Error).message }, 'terminal recording not removed');
        return false;
      }
    }
    try {
      await this.loop.record('system', [{ type: 'terminal.recording_removed', data: { recordingId, reason } }]);
    } catch (err) {
      this.logger.error({ recordingId, err: (err as Error).message }, 'terminal recording removal not recorded');
      return false;
    }
    this.logger.info({ recordingId, sizeBytes: r.sizeBytes, reason }, 'terminal recording removed');
    return true;
  }
}

const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;
