/** The help of `svc relay events prune`, the command that cuts history (usage-events.ts joins it in). */

export const PRUNE_HELP = `Usage: svc relay events prune --before TIME|SEQ [--archive DIR] [--yes] [--json]

Cuts the head off the home's file log: every whole segment whose records are all before the cut is
deleted (or, with --archive, moved to DIR), never the segment being written and never one past the
snapshot written first. The cut is recorded as a log.pruned event carrying the seq and hash of the last
record dropped, and a checkpoint of that record signed with the relay's key is kept in
<SVC_HOME>/relay/checkpoints (and in DIR). Afterwards verify, replay and start-up prove the log from the
cut on; "svc relay events verify --archive DIR" proves archive and log as one chain.

On a stopped relay's home only: a running relay holds it and is refused (set RELAY_LOG_RETENTION_DAYS
to let the relay prune itself). Not built for a PostgreSQL log. Without --yes it only says what would go.

Options:
  --before TIME|SEQ  an ISO time (e.g. 2026-11-01T00:00:00Z: segments whose last record is older) or a
                     seq (segments whose records all come before it)
  --archive DIR      move the segments (and the cut's checkpoint) to DIR instead of deleting them
  --yes              prune (without it: a dry run)
  --json             print the report as JSON
  -h, --help         show this help`;
