// ── Personal data (`/console/api/personal-data`): sealed content's keys and forgettings, never content ──

/** The data keys one device's content is sealed under (one per hour it sent or got content in). */
export type PersonalDataDevice = {
  /** A token prefix, or `host` (Thread messages posted while no phone was subscribed). */
  device: string;
  /** The paired device's name, when its session is still known. */
  device_name: string | null;
  keys: number;
  /** The first and last hour (epoch seconds of its start) with content. */
  oldest_hour: number;
  newest_hour: number;
};

export type ForgettingRow = {
  seq: number;
  at: number;
  scope: 'device' | 'before' | 'retention' | 'revoked' | 'secret';
  device: string | null;
  /** ISO time asked for, or null. */
  before: string | null;
  keys: number;
  by: string;
};

export type PersonalDataView = {
  ok: true;
  server_time: number;
  /** Where the keys are: a file under the home, or a table beside a PostgreSQL log. */
  store: 'file' | 'postgres';
  where: string;
  /** RELAY_PERSONAL_DATA_RETENTION_DAYS (0: kept until forgotten by hand). */
  retention_days: number;
  keys: number;
  devices: PersonalDataDevice[];
  forgettings: ForgettingRow[];
};

/** `POST /console/api/personal-data/forget`: how many keys went (or would go, with `dry_run`), and the event's seq. */
export type ForgetAnswer = { ok: true; keys: number; seq: number | null; dry_run: boolean };
