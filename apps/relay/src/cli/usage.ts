import { GRANT_CHANNELS, pairingDefaultsText } from '@svc/events/grant-channels';
import { BACKUP_HELP } from './usage-backup';
import { WITNESS_HELP } from './usage-witness';
import { PHONE_SIM_USAGE } from './phone-sim-usage';
import { EVENTS_COMMANDS, EVENTS_HELP } from './usage-events';
import { SERVICE_HELP } from './usage-service';
import { optionText } from './usage-text';

const PAIRING_DEFAULTS = pairingDefaultsText();

/** Help texts. Each command's text is what `svc help <command>` and `<command> --help` print. */
export const HELP: Readonly<Record<string, string>> = {
  ...SERVICE_HELP,
  '': `svc: operator commands for the svc relay

Usage:
  svc relay start [options]        run the relay (HTTP + phone WebSocket on one port)
  svc relay pair [options]         mint a pairing code on the running relay and show its QR
  svc relay devices [--json]       the paired devices and their renewal; revoke or end-trust PREFIX
  svc relay blocks [--json]        addresses the rate limiter blocks; unblock ADDRESS lifts one
  svc relay console [--json]       a one-time sign-in link for the console (open it on this machine)
  svc relay events replay          rebuild state from the event log and print a summary
  svc relay events verify          check every record's checksum and the hash chain
  svc relay events tail            print the newest events (--follow to keep watching)
  svc relay events export|import   copy a log between the file store and PostgreSQL, chain proven
  svc relay events checkpoint      sign the log's Merkle tree head (C2SP checkpoint) for an auditor to keep
  svc relay events vkey            the verifier key (signed-note form) that checks those checkpoints
  svc relay events proof           an inclusion (--seq) or consistency (--from --to) proof, as JSON
  svc relay events public-key      the public key that checks the older JSON checkpoints, and its key id
  svc relay witness --relay URL    a witness off this host: cosign the relay's checkpoint if consistent, else refuse
                                   (--listen HOST:PORT: serve C2SP tlog-witness add-checkpoint to any log)
  svc relay backup --out FILE      a consistent copy of the running relay's home (log, keys, secrets)
  svc relay restore FILE           lay a backup out as a home (--home DIR) on this or a new machine
  svc relay events forget          forget personal content (notifications, Threads, recordings) by device or time
  svc relay events prune           drop or archive whole segments of the log before a time or seq (a recorded cut)
  svc relay insecure-api-key [status|on|off]
                                   API-key voice auth over plain HTTP from other hosts (until restart)
  svc relay update-check           is a newer relay available (offline: "unknown")
  svc relay doctor [--json]        check the relay, the agent's API, TLS, the event log, disk
  svc relay mcp                    an MCP server on stdio for desktop agents, through the running relay
  svc relay secrets [list|set|forget NAME]
                                   named secrets agents type without seeing (MCP android_type_secret)
  svc relay profiles [list|enable] which profiles enable the relay's plugin; enable it
  svc relay compat [status|install|remove]
                                   the compatibility hook for older agent API servers
  svc relay service print          a hardened systemd unit for this install and home
  svc relay service install        write it to /etc/systemd/system and say how to enable it
  svc relay standby init --from H  prepare this home as a hot standby of the leader's (PostgreSQL)
  svc reach --credentials FILE     the Reach broker (experimental; see "svc help reach")
  svc reach host-entry [--json]    this relay's Reach host id, a new host token and its broker entry
  svc phone-sim [options]          a simulated phone: Device Control, notifications, Threads, shell, voice
  svc help [command]               help for a command (also: <command> --help)
  svc --version                    print the relay's version

Exit status: 0 ok, 1 the command failed, 2 usage error.
Data lives under $SVC_HOME (default ~/.svc): relay/events, relay/snapshots, relay/secret.key,
relay/checkpoint-key.pem, relay/operator.key (the operator's credential: whoever reads it is the operator).
Commands that talk to the running relay find the relay of $SVC_HOME by its lock (any port), else
RELAY_HOST/RELAY_PORT, and send the home's operator key.`,

  'phone-sim': PHONE_SIM_USAGE,

  relay: `Usage: svc relay <command>

Commands:
  start                 run the relay
  pair                  mint a pairing code on the running relay and show its QR
  devices               the paired devices and their trusted-device renewal
  blocks                addresses the rate limiter blocks, and unblock ADDRESS
  console               a one-time sign-in link for the operator console
  backup                a consistent copy of the running relay's home (log, keys, secrets, recordings)
  restore               lay a backup out as a home, on this machine or a new one
  events ${EVENTS_COMMANDS.join('|')}
                        audit the event log, sign its head for an auditor, move it between stores,
                        or forget personal content
  insecure-api-key [status|on|off]
                        the plain-HTTP API-key voice escape hatch of the running relay
  update-check          whether a newer relay is available
  doctor                check the relay and what it depends on, with fix hints
  mcp                   an MCP server on stdio for desktop agents, through the running relay
  secrets [list|set NAME|forget NAME]
                        named secrets agents type without seeing them (MCP android_type_secret)
  profiles [list|enable]
                        which profiles enable the relay's plugin; enable it
  compat [status|install|remove]
                        the compatibility hook for older agent API servers
  service print|install a hardened systemd unit for this install and home
  standby init --from H prepare this home as a hot standby of the leader's (PostgreSQL)
  witness --relay URL   a witness off this host: cosign the relay's checkpoint if consistent, else refuse

Run "svc help relay <command>" for a command's options.`,

  'relay start': `Usage: svc relay start [options]

Runs the relay in the foreground until SIGINT or SIGTERM (then it closes phone sockets, writes
relay.stopping and flushes the log).

Options (each wins over its environment variable, which wins over the default):
  --host HOST                  bind address (RELAY_HOST, default 0.0.0.0)
  --port PORT                  listen port, 0 for any free port (RELAY_PORT, default 8767)
  --no-ssl                     serve plain HTTP/ws even if RELAY_SSL_CERT/RELAY_SSL_KEY are set
  --shell PATH                 absolute path of the terminal shell (RELAY_TERMINAL_SHELL, default $SHELL)
  --webapi-url URL             API server URL (RELAY_WEBAPI_URL, default http://localhost:8642)
  --log-level LEVEL            DEBUG, INFO, WARNING or ERROR (RELAY_LOG_LEVEL, default INFO)
  --config PATH                service config file (RELAY_SVC_CONFIG, default <svc_home>/config.yaml)
  --allow-insecure-api-key     dev only: accept the API key over plain HTTP from the LAN
                               (RELAY_ALLOW_INSECURE_API_BEARER=1)
  --client-spelling svc|hermes the brand in the schemes, markers, headers and paths the relay writes:
                               svc (the spec's) or hermes (what the public app and CLI read); both are
                               always read (RELAY_CLIENT_SPELLING, default svc)
  --standby                    a hot standby on PostgreSQL: follow the leader's log, refuse writes and
                               phone sockets with 503 relay.standby, take over when the leader's
                               session ends (RELAY_ROLE=standby; RELAY_STANDBY_POLL_MS, default 500;
                               RELAY_LEADER_LEASE_MS, default 3000)
  -h, --help                   show this help

Logs are JSON lines on stdout; on a terminal they are printed as readable lines instead
(RELAY_LOG_FORMAT=json|pretty forces one). Start-up messages go to stderr.
Exit status 1 on a bad configuration, a broken event log, an event log another relay is using, or a port already in use.`,

  'relay devices': `Usage: svc relay devices [--json]
       svc relay devices revoke PREFIX [--forget] [--json]
       svc relay devices end-trust PREFIX [--json]

Lists the devices paired with the relay running on this machine (its loopback console API): token
prefix, name, surface, online or last seen, session expiry, and the trusted-device renewal (how long
the device may renew its session with its refresh token, and how often it did).
  revoke PREFIX      end the session and its renewal (the device must pair again); with --forget,
                     also forget its notification, Thread and recorded shell content (see
                     "svc relay events forget")
  end-trust PREFIX   end only the renewal: the session works until it expires, then the device must
                     pair again
A PREFIX that starts with "-" (token prefixes are base64url, so one in 32 does) reads as an option:
put "--" before it: svc relay devices revoke -- -Xy1
The relay of $SVC_HOME is found by its lock (any port); with none running, through RELAY_HOST and RELAY_PORT.
Renewal lasts RELAY_REFRESH_TTL_DAYS (default 180) from pairing; 0 turns it off.`,

  'relay blocks': `Usage: svc relay blocks [--json]
       svc relay blocks unblock ADDRESS [--json]

Lists the addresses the rate limiter of the relay running on this machine blocks right now (its loopback
console API): 10 wrong pairing codes within 60 s block an address for 120 s, 5 wrong session tokens for
300 s. Each row says which, since when and until when (UTC). An IPv6 block covers its whole /64.
  unblock ADDRESS    lift that block at once (as listed; any address of a blocked /64 works too); the
                     event log records it as the operator's, as the console's Unblock does
The relay of $SVC_HOME is found by its lock (any port); with none running, through RELAY_HOST and RELAY_PORT.`,

  'relay console': `Usage: svc relay console [--json]

Prints a one-time sign-in link for the operator console of the relay of $SVC_HOME
(http://127.0.0.1:PORT/console/login#...). Open it in a browser on this machine: it signs that browser in
(an HttpOnly cookie, RELAY_CONSOLE_SESSION_HOURS, default 12) and cannot be used again; unused, it expires
after 15 minutes. "svc relay start" prints one at start. The request carries the home's operator key
(relay/operator.key), so run it as the relay's user with its SVC_HOME.`,

  'relay pair': `Usage: svc relay pair [options]
       svc relay pair --register-code CODE [--ttl DURATION] [--grants LIST] [--json]

Mints a one-shot pairing code on the relay running on this machine (POST /pairing/mint on
loopback), prints its QR code (the JSON the app scans), the pairing URL to paste (svc-relay://, or
hermes-relay:// when the relay runs with RELAY_CLIENT_SPELLING=hermes: the spelling in force) and when
the code expires (10 minutes). A relay phones cannot reach (bound to 127.0.0.1) is said beside the code,
with the address they would use. With --register-code, registers the code the phone shows instead
(POST /pairing/register), with the same --ttl and --grants.
The relay of $SVC_HOME is found by its lock (any port); with none running, through RELAY_HOST and RELAY_PORT
(0.0.0.0 is dialled as 127.0.0.1), over
HTTPS when RELAY_SSL_CERT and RELAY_SSL_KEY are set.

Options:
  --ttl DURATION        session lifetime: 90s, 30m, 12h, 7d, 2w, 1y or never (default ${PAIRING_DEFAULTS.session})
  --grants LIST         per-channel grants, e.g. terminal=1d,bridge=1h; a channel may be "never"
                        (as long as the session) or "off" (not granted). Unnamed channels keep
                        their defaults (${PAIRING_DEFAULTS.grants}).
                        desktop is granted only when named (pairing a desktop CLI that serves
                        tools to the agent: --grants desktop=7d).
${optionText(`Channels: ${GRANT_CHANNELS.join(', ')}`)}
  --dashboard-url URL   put the dashboard origin into the QR payload
  --json                print the relay's answer as JSON instead of the QR
  --no-qr               do not draw the QR (code, URL and expiry only)
  --register-code CODE  register the 6-character code the phone shows (manual pairing)
  -h, --help            show this help`,

  'relay insecure-api-key': `Usage: svc relay insecure-api-key [status|on|off] [--json]

Reports (status, the default) or turns on or off the running relay's escape hatch for API-key voice
auth from other hosts over plain HTTP (spec 5 rule 3; PATCH /relay/security on loopback). "on" lasts
until the relay restarts (start with --allow-insecure-api-key or RELAY_ALLOW_INSECURE_API_BEARER=1 to
keep it); each change is recorded in the event log. Prefer TLS (RELAY_SSL_CERT/RELAY_SSL_KEY) or a TLS
proxy with RELAY_TRUST_PROXY_HEADERS=1.`,

  'relay standby init': `Usage: svc relay standby init --from <the leader's home | its relay/standby.kek>

Prepares this home (SVC_HOME) for a hot standby of the leader on the same database (RELAY_EVENT_STORE).
It copies one file, the leader's key-encryption key (relay/standby.kek, 32 bytes), then writes the
database's shared secrets, sealed under that key, into this home: secret.key (token digests, snapshot
keys), operator.key and checkpoint-key.pem. The data keys already live in the database. Run it once;
the leader publishes its copies at every start and a standby takes them at every start.`,

  'relay doctor': `Usage: svc relay doctor [--json]

Checks, read-only, and prints each with a fix hint: the relay on this host (GET /health through RELAY_HOST
and RELAY_PORT), the agent's native routes (RELAY_WEBAPI_URL's /v1/capabilities), TLS (the certificate's
expiry), the event log's chain and lock, free disk where the relay writes, and the service .env's
permissions. Never prints a secret. Exit 1 when a check is an error, else 0 (warnings included).`,

  'relay mcp': `Usage: svc relay mcp

An MCP (Model Context Protocol) server on stdin/stdout, for agents that only launch local processes
(a desktop app's "mcpServers" entry). It forwards every message to the running relay's /mcp, so the
tools are the relay's Device Control (android_ping, android_read_screen, android_tap, ...) behind its
safety pipeline, and every command is recorded with the MCP client's name.
The relay of $SVC_HOME is found by its lock (any port), else through RELAY_HOST and RELAY_PORT; over TLS, let Node trust
its certificate with NODE_EXTRA_CA_CERTS. The session token comes from MOBILE_BRIDGE_TOKEN (or
SVC_RELAY_TOKEN) and needs the bridge grant. Only JSON-RPC is written to stdout; errors go to stderr.`,

  'relay secrets': `Usage: svc relay secrets [list] [--json]
       svc relay secrets set NAME [--json]      (the value from stdin, or a prompt that shows nothing)
       svc relay secrets forget NAME [--json]

Named secrets (a password, a PIN) that an agent types with the MCP tool android_type_secret {name}
without ever seeing them: not in its results, the event log, the relay's log, metrics or the console.
Each value is sealed in the log under a data key of its own; forget destroys that key (the record stays,
unreadable), and set on an existing NAME replaces the value and destroys the old one's key. A NAME is 1 to
40 letters, digits, _ or -; a value at most 1024 characters on one line; RELAY_MCP_SECRETS_MAX (default 32)
bounds how many. A value is never an argument: printf %s "$VALUE" | svc relay secrets set NAME
Through the running relay of $SVC_HOME (its lock, any port; else RELAY_HOST and RELAY_PORT) with the home's
operator key.`,

  reach: `Usage: svc reach --credentials FILE [--listen ADDR] [--port P] [--tls-cert C --tls-key K] [--state FILE] [limits]

The Reach broker (experimental): phones that cannot reach a relay directly meet it here. Relays hold a
control socket (WSS /v1/connect) registered with their host token; phones come with a bootstrap
credential (from a pairing QR, one use) or a route credential (from auth.ok). The broker copies opaque
bytes: the Secure Link TLS session inside is end to end.

  --credentials FILE  {"hosts": {"<host id>": {"host_token_sha256": "<base64url SHA-256>"}}}
                      (digests only: "svc reach host-entry" on the relay prints an entry); SIGHUP re-reads it
  --listen ADDR       default 127.0.0.1; anything but loopback needs --tls-cert and --tls-key
  --port P            default 9444
  --state FILE        keep published credentials (digests) across restarts
Limits (whole numbers):
  --streams-per-route N          streams one route credential carries at once (8; past it: too_many_streams)
  --refusals-per-minute N        refused registrations a minute from one address, an IPv6 /64 (30; then 429)
  --refusals-per-minute-total N  refused registrations a minute from everyone (600); past it only addresses
                                 whose credential matched in the last hour get in
  --replay-ids N                 matched connection ids and used bootstrap credentials kept a day (65536 each)
  --tracked-sources N            addresses remembered for the two counts above (4096 each)
Public: GET /health. Runs until SIGINT/SIGTERM.`,

  'reach host-entry': `Usage: svc reach host-entry [--json]

Prints this relay's Reach host id (made once as $SVC_HOME/relay-secure-link/host-id, or
RELAY_SECURE_LINK_BROKER_HOST_ID_FILE; one an older relay made as $SVC_HOME/relay/secure-link/host-id
stays there), a new host token for the relay's environment
(RELAY_SECURE_LINK_BROKER_HOST_TOKEN) and the broker's credentials entry holding only its digest.`,

  'relay compat': `Usage: svc relay compat [status] [--site-packages DIR] [--json]
       svc relay compat install [--site-packages DIR] [--dry-run] [--force] [--json]
       svc relay compat remove [--all | --site-packages DIR] [--dry-run] [--force] [--json]

The compatibility hook (spec 4.12) fills gaps of agent API servers older than the clients: a one-line
svc_relay_compat.pth in the agent Python's site-packages (SVC_PYTHON, default python3) loads the hook kept
under $SVC_HOME/compat/. Inside the API server it adds, only where the server lacks them, GET/PATCH
/api/config (other fields kept), GET /api/skills/{name}, GET /api/memory and the 501 PUT /api/skills/toggle.
It never shadows an upstream route, never adds session routes, never starts the relay or unlocks relay
features. Restart the API server after install or remove. --all removes it from every site-packages.`,

  'relay profiles': `Usage: svc relay profiles [list] [--json]
       svc relay profiles enable (--all | <profile>...) [--dry-run] [--json]

list      each profile config (the global config.yaml as "default", profiles/<name>/config.yaml) and
          whether it enables the relay's plugin: enabled, disabled (plugins.disabled) or absent
enable    add svc-relay to plugins.enabled (and take it out of plugins.disabled); the YAML is edited in
          place (comments and order kept), the previous text kept as config.yaml.bak

With a relay running (RELAY_HOST/RELAY_PORT), the relay does the write, records it in its log and tells
connected phones; with none, the files are read and written here. Exit 1 when a config could not be changed.`,

  'relay update-check': `Usage: svc relay update-check [--refresh] [--json]

Asks the running relay (GET /relay/update-check on loopback) whether a newer version is available. With
no feed configured (RELAY_UPDATE_FEED_URL, a JSON document {"latest": "x.y.z", "update_command": "..."})
it reports the running version and "latest unknown"; a feed's answer is kept an hour (--refresh asks again).`,

  ...EVENTS_HELP,
  ...BACKUP_HELP,
  ...WITNESS_HELP,
};

export function helpFor(command: string): string {
  return HELP[command] ?? HELP[''];
}
