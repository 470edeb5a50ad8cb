/** Help of the commands that copy a whole home: `svc relay backup` and `svc relay restore`. */
export const BACKUP_HELP: Readonly<Record<string, string>> = {
  'relay backup': `Usage: svc relay backup --out FILE [--home DIR] [--json]

Writes a consistent copy of a relay's home to FILE (a tar archive, mode 0600) while the relay runs,
without its lock: the event log up to a durable seq (read first: whole segments, the last one cut at
that seq's record; on PostgreSQL, RELAY_EVENT_STORE, the rows up to it), the newest snapshot not past it,
the data keys, relay/secret.key, the operator and checkpoint keys, the Secure Link identity, terminal
recordings, $SVC_HOME/.env and config.yaml, and a manifest (format, relay version, head seq and hash,
the SHA-256 of every file). Every record is proven on the way. Owned media and locks are left out.
The file holds every secret of the home: keep it as you keep the home.

Options:
  --out FILE     where the backup goes (a new file: an existing one is never overwritten)
  --home DIR     the home to back up (default: $SVC_HOME, else ~/.svc)
  --json         print the report as JSON
  -h, --help     show this help`,

  'relay restore': `Usage: svc relay restore FILE [--home DIR] [--to postgres://...] [--force] [--json]

Lays a backup out as a relay home. Nothing moves into the home before the whole archive is proven: its
entries are checked (regular files only, no absolute or climbing paths, sizes inside the file), every
file's SHA-256 against the manifest, and the log's chain to the manifest's head seq and hash. The files
are laid out in a new folder beside the home and renamed into place. A relay started on the home accepts
the phones' session and refresh tokens as before, and "svc relay events verify" passes.

Options:
  --home DIR     the home to fill (default: $SVC_HOME, else ~/.svc); it must be empty or new
  --to URL       put the log, its snapshot and the data keys into this empty PostgreSQL database instead
                 of the home (then start the relay with RELAY_EVENT_STORE set to it)
  --force        restore into a home that is not empty: its relay files are moved aside first into
                 <home>/.before-restore-<time>/ (refused while a relay runs on it)
  --json         print the report as JSON
  -h, --help     show this help`,
};
