import { GRANT_CHANNELS, pairingDefaultsText } from '@svc/events/grant-channels';

const PAIRING_DEFAULTS = pairingDefaultsText();

/** Text under an option's description column (24 spaces in), wrapped at 100 characters on spaces. */
function optionText(text: string): string {
  const indent = ' '.repeat(24);
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent.length + line.length + 1 + word.length > 100) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, indent + line].join('\n');
}

/** Help texts. Each command's text is what `svc help <command>` and `<command> --help` print. */
export const HELP: Readonly<Record<string, string>> = {
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
  svc relay events checkpoint      sign the log's head (seq and hash) for an auditor to keep elsewhere
  svc relay events public-key      the public key that checks those signatures, and its key id
  svc relay events forget          forget personal content (notifications, Threads, recordings) by device or time
  svc relay insecure-api-key [status|on|off]
                                   API-key voice auth over plain HTTP from other hosts (until restart)
  svc relay update-check           is a newer relay available (offline: "unknown")
  svc relay doctor [--json]        check the relay, the agent's API, TLS, the event log, disk
  svc relay mcp                    an MCP server on stdio for desktop agents, through the running relay
  svc relay profiles [list|enable] which profiles enable the relay's plugin; enable it
  svc relay compat [status|install|remove]
                                   the compatibility hook for older agent API servers
  svc reach --credentials FILE     the Reach broker (experimental; see "svc help reach")
  svc reach host-entry [--json]    this relay's Reach host id, a new host token and its broker entry
  svc phone-sim [options]          a simulated sideload phone for Device Control (demo, tests)
  svc help [command]               help for a command (also: <command> --help)
  svc --version                    print the relay's version

Exit status: 0 ok, 1 the command failed, 2 usage error.
Data lives under $SVC_HOME (default ~/.svc): relay/events, relay/snapshots, relay/secret.key,
relay/checkpoint-key.pem, relay/operator.key (the operator's credential: whoever reads it is the operator).
Commands that talk to the running relay find the relay of $SVC_HOME by its lock (any port), else
RELAY_HOST/RELAY_PORT, and send the home's operator key.`,

  'phone-sim': `Usage: svc phone-sim --relay ws://127.0.0.1:8767 (--code ABC123 | --token <session token>)
         [--mode legacy|app] [--confirm allow|deny|ignore] [--name NAME] [--device-id ID] [--master on|off]
         [--no-device-control] [--current-app PACKAGE] [--trust send,pay] [--auto-disable MINUTES] [--screen WxH]
         [--save-token FILE] [--quiet]

A simulated sideload phone for the bridge: pairs, reports bridge.status, answers every Device Control
route with plausible data, answers destructive-verb confirmations by --confirm, and logs what it receives.
--mode app behaves like the real Android app (docs/COMPATIBILITY.md): nested status every 30 s, its own
confirmation modal, blocklist and idle expiry (--auto-disable, 5-120 min, default 30), uploaded screenshots;
it answers bridge.command only (bridge.confirm and bridge.master_disabled are dropped, as the app drops them).`,

  relay: `Usage: svc relay <command>

Commands:
  start                 run the relay
  pair                  mint a pairing code on the running relay and show its QR
  devices               the paired devices and their trusted-device renewal
  blocks                addresses the rate limiter blocks, and unblock ADDRESS
  console               a one-time sign-in link for the operator console
  events replay|verify|tail|export|import|checkpoint|public-key
                        audit the event log, sign its head for an auditor, or move it between stores
  insecure-api-key [status|on|off]
                        the plain-HTTP API-key voice escape hatch of the running relay
  update-check          whether a newer relay is available
  doctor                check the relay and what it depends on, with fix hints
  mcp                   an MCP server on stdio for desktop agents, through the running relay
  profiles [list|enable]
                        which profiles enable the relay's plugin; enable it
  compat [status|install|remove]
                        the compatibility hook for older agent API servers

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
loopback), prints its QR code (the JSON the app scans), the hermes-relay:// URL to paste and when
the code expires (10 minutes). With --register-code, registers the code the phone shows instead
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

  'relay events': `Usage: svc relay events <replay|verify|tail|export|import|checkpoint|public-key|forget> [options]

  replay    rebuild every read model from the log (from seq 1, verifying the chain) and summarise
  verify    check every record's checksum, the seq order and the previous-hash links
  tail      print the newest events, optionally following new ones
  export    copy the log to a .jsonl file, a log directory or an empty PostgreSQL database
  import    fill an empty store (the relay's own by default) from a copy
  checkpoint  sign the log's head with the relay's key (verify --checkpoint FILE proves it later)
  public-key  print the public key that checks checkpoints, and its key id
  forget    destroy the data keys of personal content, by device or time (--yes; without: a dry run)

Run "svc help relay events <command>" for options.`,

  'relay events replay': `Usage: svc relay events replay [--log WHERE] [--at TIME] [--json]

Rebuilds state from the event log exactly as the relay does at start (every projection, from seq 1,
checking the hash chain; snapshots are not trusted) and prints: sessions with their grants, live
pairing codes, rate-limit blocks, event counts per type, the last seq and hash. Read-only: a torn
last line is reported, not cut.

Options:
  --log WHERE    the log: its directory, a .jsonl export, or a postgres:// URL (default: the relay's
                 own, RELAY_EVENT_STORE when it is a postgres:// URL, else <SVC_HOME or ~/.svc>/relay/events)
  --at TIME      judge expiry at this ISO time instead of now
  --json         print the summary as JSON
  -h, --help     show this help`,

  'relay events verify': `Usage: svc relay events verify [--log WHERE] [--checkpoint FILE [--public-key KEY]] [--json]

Checks every record of the log: its own checksum, consecutive seqs, and that each record names the
hash of the one before (the chain). Exits 1 and names the first bad record when anything was edited,
removed or reordered. A torn last line (an interrupted write) is reported but is not a break: the
relay cuts it at its next start.

With --checkpoint, also exits 1 unless the checkpoint's signature is good under KEY and the log still
holds that exact record at that seq (the log extends the checkpoint): a history rewritten at or before
it, even re-chained, is named with the seq and both hashes; a log shorter than it is called truncated.

Options:
  --log WHERE    the log: its directory, a .jsonl export, or a postgres:// URL (default: the relay's
                 own, RELAY_EVENT_STORE when it is a postgres:// URL, else <SVC_HOME or ~/.svc>/relay/events)
  --checkpoint FILE
                 a checkpoint written by "svc relay events checkpoint" or the console's Store page
  --public-key KEY
                 the public key to judge it by: base64 of the raw 32 bytes (as "public-key" prints it),
                 a PEM, or a file holding either (default: the home's own key; an auditor passes their
                 own copy, since whoever controls this host controls the home's key)
  --json         print the report as JSON
  -h, --help     show this help`,

  'relay events forget': `Usage: svc relay events forget (--device PREFIX | --before TIME) [--yes] [--json]

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
"svc relay devices revoke PREFIX --forget" revokes a device and forgets its content.`,

  'relay events tail': `Usage: svc relay events tail [--follow] [--type T]... [--limit N] [--log WHERE] [--json]

Prints the newest events, oldest first.

Options:
  -f, --follow   keep watching the log and print events as they are written (Ctrl-C stops)
  --type T       only events of this type; "session" or "session." matches every session.* type;
                 repeat the option or separate types with commas
  -n, --limit N  how many events to print first (default 20; 0 prints them all)
  --log WHERE    the log: its directory, a .jsonl export, or a postgres:// URL (default: the relay's
                 own, RELAY_EVENT_STORE when it is a postgres:// URL, else <SVC_HOME or ~/.svc>/relay/events)
  --json         print the stored records (one JSON line each)
  -h, --help     show this help`,

  'relay events export': `Usage: svc relay events export [--log WHERE] [--to FILE|DIR/|postgres://...] [--json]

Copies the relay's log record for record (the same seqs, ids and hashes) to a new JSON-lines FILE, a
file-store log directory (DIR/, existing or ending in a slash), or an empty PostgreSQL database; without
--to, the records go to stdout. Every record is proven on the way, the target is read back and proven
again on arrival, and a log that fails its proof is not copied (nothing is left behind).
The target must hold no log yet, and no relay may be writing it.

Options:
  --log WHERE    the log: its directory, a .jsonl export, or a postgres:// URL (default: the relay's
                 own, RELAY_EVENT_STORE when it is a postgres:// URL, else <SVC_HOME or ~/.svc>/relay/events)
  --to TARGET    where the copy goes (default: stdout)
  --json         print the report as JSON
  -h, --help     show this help`,

  'relay events checkpoint': `Usage: svc relay events checkpoint [--log WHERE] [--out FILE]

Verifies the whole chain (read-only, beside a running relay), then signs its last record with the
relay's Ed25519 key (<SVC_HOME>/relay/checkpoint-key.pem, made on first use, 0600) and writes
{"format":"svc-relay-checkpoint/1","seq","hash","at","key_id","signature"} to FILE or stdout. Keep the
file off this host; "svc relay events verify --checkpoint FILE --public-key KEY" proves later that the
log still holds that record. The signature (base64) covers the bytes
"svc-relay-checkpoint/1\\n<seq>\\n<hash>\\n<at>\\n<key_id>\\n". An empty or broken log is not signed (exit 1).

Options:
  --log WHERE    the log: its directory, a .jsonl export, or a postgres:// URL (default: the relay's
                 own, RELAY_EVENT_STORE when it is a postgres:// URL, else <SVC_HOME or ~/.svc>/relay/events)
  --out FILE     write the checkpoint to FILE (0644) instead of stdout
  -h, --help     show this help`,

  'relay events public-key': `Usage: svc relay events public-key [--json]

Prints the public key that checks checkpoints, as base64 of its raw 32 bytes (Ed25519), and its key id
(the first 16 hex digits of the SHA-256 of those bytes). Makes the key pair under
<SVC_HOME>/relay/checkpoint-key.pem on first use. Copy the public key off this host once (an auditor's
machine, paper): a key read from this host later proves nothing to someone who distrusts it.

Options:
  --json         {"algorithm","public_key","key_id","created"}
  -h, --help     show this help`,

  'relay events import': `Usage: svc relay events import SOURCE [--into DIR|postgres://...] [--json]

Copies SOURCE (a .jsonl export, a log directory, or a postgres:// URL) into an empty store: by default
the relay's own (RELAY_EVENT_STORE when it is a postgres:// URL, else <SVC_HOME>/relay/events). The chain
is proven on the way and again on arrival. Stop the relay first: a store in use is refused. Snapshots
of a file store's previous log are removed (they describe a log that is gone); the relay replays the
imported log in full at its next start. Tokens stay valid only where SVC_HOME's relay/secret.key is
the one that wrote the log (the log holds keyed digests, never tokens).

Options:
  --into TARGET  the store to fill (default: the relay's own)
  --json         print the report as JSON
  -h, --help     show this help`,
};

export function helpFor(command: string): string {
  return HELP[command] ?? HELP[''];
}
