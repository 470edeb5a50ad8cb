/** The help of the commands that cut or forget history (usage.ts holds the rest). */

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

export const FORGET_HELP = `Usage: svc relay events forget (--device PREFIX | --before TIME) [--yes] [--json]

Forgets personal content: notification titles and texts, Thread messages and replies, terminal
recordings. The log and the recordings hold them sealed (AES-256-GCM) under data keys kept outside
them, one per device and UTC hour; forgetting destroys keys (and removes the recordings). Afterwards
that content reads as forgotten everywhere (the relay, the console, a replay), the rest of each event
stays, and "svc relay events verify" still passes. The forgetting is itself an
event (its scope and who asked, never the content).

Through the relay running on this machine (its loopback console API), or on the home's files (or its
PostgreSQL database) when none runs. Without --yes it only says how many keys would go.

Options:
  --device PREFIX  the content of devices whose token prefix starts with PREFIX (at least 4
                   characters; "host": Thread messages posted while no phone was subscribed),
                   with the Thread messages they received under another key
  --before TIME    the content of every hour that began before TIME (ISO 8601, e.g. 2026-11-01 or
                   2026-11-01T12:00:00Z); keys are per hour, so content up to the end of TIME's hour
                   goes too. With --device: that device's content only
  --yes            forget (without it: a dry run)
  --json           print the answer as JSON
  -h, --help       show this help
RELAY_PERSONAL_DATA_RETENTION_DAYS forgets automatically what is older (0, the default: keep);
"svc relay devices revoke PREFIX --forget" revokes a device and forgets its content.`;
