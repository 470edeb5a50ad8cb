// Terminal recordings (`/console/api/terminal/recordings`): types only, re-exported by index.ts. Times are epoch seconds.

/** One saved recording (never its content: that is `GET /console/api/terminal/recordings/{recording_id}`, `application/x-asciicast`, opened). */
export type RecordingRow = {
  recording_id: string;
  shell_id: string;
  /** Empty for a recording recovered at start whose shell the log no longer names. */
  session_name: string;
  token_prefix: string;
  device_id: string;
  /** The name the Devices page shows (the id when the session is gone; empty when token_prefix is). */
  device_name: string;
  started_at: number;
  duration_ms: number;
  size_bytes: number;
  /** SHA-256 of the file as stored (sealed when `sealed`), which `svc relay events verify` checks. */
  sha256: string;
  /** Its content is sealed under its device's data key (forgetting the device forgets it); false: an older, plain file. */
  sealed: boolean;
  /** Typed input was recorded too (RELAY_TERMINAL_RECORDING_INPUT). */
  input: boolean;
  /** Output past a bound was not recorded (`stopped` says which, when the log says). */
  truncated: boolean;
  /**
   * Why it stopped before its shell ended: `max_bytes` (RELAY_TERMINAL_RECORDING_MAX_MB), `total_bytes`
   * (RELAY_TERMINAL_RECORDINGS_TOTAL_MB, only live recordings left to count), `disk_low` (the disk guard's
   * reserve), `disk_stalled`, `write_failed`, `forgotten`; null when it did not.
   */
  stopped: 'max_bytes' | 'total_bytes' | 'disk_low' | 'disk_stalled' | 'write_failed' | 'forgotten' | null;
  /** Saved at start-up: the relay stopped while its shell ran. */
  recovered: boolean;
};

/** Whether shells are recorded now, and the caps (bytes). */
export type RecordingSettings = { enabled: boolean; input: boolean; max_bytes: number; total_max_bytes: number };

export type RecordingsView = { ok: true; server_time: number; settings: RecordingSettings; total_bytes: number; recordings: RecordingRow[] };
