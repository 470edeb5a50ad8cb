import { PRUNE_HELP } from './usage-history';

/** The help of `svc relay events` and its commands (usage.ts holds the rest and joins them). */

/** The `svc relay events` commands, in the order the help lists them (both "svc relay --help" and "svc relay events --help"). */
export const EVENTS_COMMANDS = [
  'replay',
  'verify',
  'tail',
  'export',
  'import',
  'checkpoint',
  'vkey',
  'proof',
  'public-key',
  'forget',
  'prune',
] as const;

export const EVENTS_HELP: Readonly<Record<string, string>> = {
  'relay events': `Usage: svc relay events <${EVENTS_COMMANDS.join('|')}> [options]

  replay    rebuild every read model from the log (from seq 1, verifying the chain) and summarise
  verify    check every record's checksum, the seq order and the previous-hash links
  tail      print the newest events, optionally following new ones
  export    copy the log to a .jsonl file, a log directory or an empty PostgreSQL database
  import    fill an empty store (the relay's own by default) from a copy
  checkpoint  sign the log's Merkle tree head as a C2SP checkpoint (verify --checkpoint FILE proves it later)
  vkey      print the verifier key (signed-note form) that checks checkpoints
  proof     print an inclusion proof of a record or a consistency proof between two tree sizes
  public-key  print the public key that checks checkpoints, and its key id
  forget    destroy the data keys of personal content, by device or time (--yes; without: a dry run)
  prune     drop or archive whole segments before a time or seq (--yes; without: a dry run)

Run "svc help relay events <command>" for options.`,

  'relay events replay': `Usage: svc relay events replay [--log WHERE] [--archive DIR] [--at TIME] [--json]

Rebuilds state from the event log exactly as the relay does at start (every projection, from seq 1,
checking the hash chain; snapshots are not trusted) and prints: sessions with their grants, live
pairing codes, rate-limit blocks, event counts per type, the last seq and hash. Read-only: a torn
last line is reported, not cut.

Options:
  --log WHERE    the log: its directory, a .jsonl export, or a postgres:// URL (default: the relay's
                 own, RELAY_EVENT_STORE when it is a postgres:// URL, else <SVC_HOME or ~/.svc>/relay/events)
  --archive DIR  segments pruned from the log: replayed first, from seq 1 (without it a pruned log is
                 replayed from the home's sealed snapshot at its cut, and the report says so)
  --at TIME      judge expiry at this ISO time instead of now
  --json         print the summary as JSON
  -h, --help     show this help`,

  'relay events verify': `Usage: svc relay events verify [--log WHERE] [--archive DIR] [--checkpoint FILE [--vkey VKEY]... [--public-key KEY]] [--json]

Checks every record of the log: its own checksum, consecutive seqs, and that each record names the
hash of the one before (the chain). Exits 1 and names the first bad record when anything was edited,
removed or reordered. A torn last line (an interrupted write) is reported but is not a break: the
relay cuts it at its next start.

With --checkpoint, also exits 1 unless the checkpoint's signature is good under KEY and the log still
holds that exact record at that seq (the log extends the checkpoint): a history rewritten at or before
it, even re-chained, is named with the seq and both hashes; a log shorter than it is called truncated.
A C2SP checkpoint (a signed note) must carry a good signature of the log's verifier key, and the log's
Merkle tree at its size must have its root: a rewritten, truncated, or rewound-and-regrown log fails.
The report says which form it read and names every key that signed (the log's, witnesses' cosignatures).

Options:
  --log WHERE    the log: its directory, a .jsonl export, or a postgres:// URL (default: the relay's
                 own, RELAY_EVENT_STORE when it is a postgres:// URL, else <SVC_HOME or ~/.svc>/relay/events)
  --archive DIR  segments pruned from the log, proven with it as one chain (a pruned log alone is
                 proven from its recorded cut)
  --checkpoint FILE
                 a checkpoint written by "svc relay events checkpoint" (C2SP note, or --json-v1), the
                 console's Store page, or a cosigned one from GET /log/checkpoint
  --vkey VKEY    a verifier key to judge a C2SP checkpoint by (repeat it: the log's, each witness's);
                 the key or a file holding it (default: the home's own log key)
  --public-key KEY
                 the public key to judge a JSON checkpoint by: base64 of the raw 32 bytes (as "public-key" prints it),
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
                   with the Thread messages they received under another key; a PREFIX that
                   starts with "-" reads as an option: write --device=-Xy1
  --before TIME    the content of every hour that began before TIME (ISO 8601, e.g. 2026-11-01 or
                   2026-11-01T12:00:00Z); keys are per hour, so content up to the end of TIME's hour
                   goes too. With --device: that device's content only
  --yes            forget (without it: a dry run)
  --json           print the answer as JSON
  -h, --help       show this help
RELAY_PERSONAL_DATA_RETENTION_DAYS forgets automatically what is older (0, the default: keep);
"svc relay devices revoke PREFIX --forget" revokes a device and forgets its content.`,

  'relay events prune': PRUNE_HELP,

  'relay events tail': `Usage: svc relay events tail [--follow] [--type T]... [--limit N] [--log WHERE] [--json]

Prints the newest events, oldest first.

Options:
  -f, --follow   keep watching the log and print events as they are written (Ctrl-C stops)
  --type T       only events of this type; "session" or "session." matches every session.* type;
                 repeat the option or separate types with commas; a name that is no type or family
                 is refused (exit 2) with the close ones
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

  'relay events checkpoint': `Usage: svc relay events checkpoint [--log WHERE] [--out FILE] [--json-v1]

Verifies the whole chain (read-only, beside a running relay), builds the RFC 9162 Merkle tree over its
records (leaf i: the record of seq i+1 as stored) and writes a C2SP tlog-checkpoint signed as a C2SP
signed note by the relay's Ed25519 key (<SVC_HOME>/relay/checkpoint-key.pem, made on first use, 0600):

  svc-relay/<key id>
  <tree size>
  <base64 root hash>

  \u2014 svc-relay/<key id> <base64(4-byte key hash || signature)>

Keep the file off this host with the verifier key ("svc relay events vkey"); "svc relay events verify
--checkpoint FILE --vkey VKEY" proves later that the log still extends it, and outside tools (Go's
sumdb/note, scripts/tlog-verify.mjs) read it too (docs/AUDITING.md). An empty or broken log is not
signed (exit 1).

Options:
  --log WHERE    the log: its directory, a .jsonl export, or a postgres:// URL (default: the relay's
                 own, RELAY_EVENT_STORE when it is a postgres:// URL, else <SVC_HOME or ~/.svc>/relay/events)
  --out FILE     write the checkpoint to FILE (0644) instead of stdout
  --json-v1      the older JSON form instead: {"format":"svc-relay-checkpoint/1","seq","hash","at","key_id",
                 "signature"}, the signature over "svc-relay-checkpoint/1\\n<seq>\\n<hash>\\n<at>\\n<key_id>\\n"
  -h, --help     show this help`,

  'relay events vkey': `Usage: svc relay events vkey [--json]

Prints the verifier key of the log's checkpoints in C2SP signed-note form,
<name>+<8 hex key hash>+<base64(0x01 || 32-byte Ed25519 public key)>, the name being the log's origin
(svc-relay/<key id>). Copy it off this host once: outside verifiers take it as it is.

Options:
  --json         {"vkey","origin","key_id"}
  -h, --help     show this help`,

  'relay events proof': `Usage: svc relay events proof [--log WHERE] (--seq N [--size S] | --from M --to N)

Verifies the chain, builds the Merkle tree and prints, as JSON with base64 hashes:
  --seq N [--size S]  {seq, tree_size, leaf_hash, record, inclusion}: the record of seq N as stored and
                      its RFC 9162 (2.1.3) inclusion proof in the tree of S records (default: all)
  --from M --to N     {from, to, consistency}: the RFC 9162 (2.1.4) proof that the tree of N records
                      extends the tree of M records
A pruned log proves records and sizes from its cut on (the log.pruned record keeps the tree there).

Options:
  --log WHERE    the log (as for replay)
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
