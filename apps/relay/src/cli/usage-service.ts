import { TIMEOUT_STOP_SECONDS } from './service-unit';

const TARGET_OPTIONS = `  --user NAME          the user it runs as (default: the one who ran sudo, else you; never root
                       unless named)
  --home DIR           its SVC_HOME, the one tree it writes (default: SVC_HOME, else the user's ~/.svc)
  --writable PATH      another path the relay and the shells it starts may write (repeat, or
                       separate with ":"); everything else is read-only to them`;

/** `svc relay service ...` help texts (usage.ts spreads them into HELP). */
export const SERVICE_HELP: Readonly<Record<string, string>> = {
  'relay service': `Usage: svc relay service <print|install> [options]

  print     print a hardened systemd unit for this install (this node, this bin/svc) and home
  install   write it to /etc/systemd/system/svc-relay.service and say how to enable it

Run "svc help relay service <command>" for options.`,

  'relay service print': `Usage: svc relay service print [--user NAME] [--home DIR] [--writable PATH]...

Prints a systemd unit that runs "svc relay start" as NAME with SVC_HOME=DIR: restarted on failure,
${TIMEOUT_STOP_SECONDS} s to stop, and hardened (NoNewPrivileges, no capabilities, ProtectSystem=strict with only the
home writable, ProtectHome, a private /tmp and /dev, @system-service system calls, ...). A phone's shell
runs under the same rules: it cannot sudo or write outside the writable paths. What each setting costs and
the unit's "systemd-analyze security" rating: docs/OPERATING.md, "Running as a service".
Notes (a home that does not exist yet, ProtectHome=read-only) go to stderr.

Options:
${TARGET_OPTIONS}
  -h, --help           show this help`,

  'relay service install': `Usage: svc relay service install [--path FILE] [--force] [--dry-run] [--user NAME] [--home DIR] [--writable PATH]...

Writes the unit "svc relay service print" prints to FILE (default /etc/systemd/system/svc-relay.service,
which needs root: run it with sudo), makes the home (0700, owned by the user) when it is missing, and prints
the two commands that enable and start it. An existing FILE is replaced only with --force.

Options:
  --path FILE          where to write the unit (a name ending in .service)
  --force              replace an existing FILE
  --dry-run            say what would be written, write nothing
${TARGET_OPTIONS}
  -h, --help           show this help`,
};
