/** Help of `svc relay witness` (issue 39). */
export const WITNESS_HELP: Readonly<Record<string, string>> = {
  'relay witness': `Usage: svc relay witness [--home DIR] --name NAME --print-vkey
       svc relay witness [--home DIR] --relay URL [--log-vkey VKEY] [--interval SECONDS] [--json]
       svc relay witness [--home DIR] [--log-vkey VKEY] --listen HOST:PORT [--relay URL --interval SECONDS] [--json]

A witness of the relay's transparency log, meant to run on another machine (from cron or a timer), with
its own home (default <SVC_HOME>/witness) and Ed25519 key. One round: it fetches GET /log/checkpoint,
checks the log's signature under VKEY, fetches the consistency proof from the tree it cosigned last
(GET /log/proof/consistency) and checks it (RFC 9162 2.1.4.2), then cosigns (C2SP tlog-cosignature/v1,
with its time) and submits the cosignature (POST /log/cosignature; the relay takes it when the witness's
verifier key is in RELAY_WITNESS_VKEYS).

It refuses a checkpoint that is not consistent with the one it cosigned last (a smaller tree: rewound or
truncated; another root at the same size: rewritten; a failed proof: rewritten, or rewound and regrown),
or not signed by the log's key: exit 1, a "WITNESS REFUSED" line on stderr, a line in <home>/refusals.jsonl,
svc_witness_refusals_total in <home>/witness.prom (a Prometheus textfile), and a signed report to the
relay (POST /log/witness-refusal) that its console's Store page shows.

With --interval it runs a round every SECONDS until SIGTERM or SIGINT, which end it cleanly after the
current round. Each refusal is said again every round; when it stops, it exits 1 if any round refused (or
the relay was unreachable at the last round), else 0. While the relay is unreachable the wait doubles from
SECONDS up to the larger of SECONDS and 900 (a "next round in N s" line says so), and is back to SECONDS
after the next round that reaches it.

With --listen it serves the C2SP tlog-witness protocol (c2sp.org/tlog-witness) instead, so a log pushes
its checkpoints to it: POST /add-checkpoint with a body of "old <size>", the consistency proof lines, an
empty line and the signed checkpoint. It trusts exactly the log of the home's log.vkey (its origin is the
key's name) and answers with its cosignature line after keeping the new tree in state.json; 404 for
another origin, 403 when no signature of the log key verifies, 400 for a malformed body or an old size
past the checkpoint, 409 (text/x.tlog.size, the size it cosigned) for a stale old size, 422 when the
proof does not verify, 409 for another root at the size it cosigned, 413 past 64 KiB, 408 for headers
slower than 10 s or a request slower than 30 s. Another root at the cosigned size, in a checkpoint the
log signed, is a refusal, recorded and said as above (once per checkpoint; no report is sent, the log got
the answer). A failed proof is answered 422 but is no refusal: a proof is not signed, and anyone can send
the public checkpoint with a made-up one. It prints "listening on http://HOST:PORT" first
(port 0: any free port) and serves until SIGTERM or SIGINT: exit 1 if it refused any, else 0. Beside
--relay and --interval it also runs the rounds, in the same process and on the same state, one update at
a time; while a process serves a home (<home>/serve.pid), another refuses to run on it.

Options:
  --home DIR     the witness's home (its key, name, the log's verifier key, the tree it cosigned last)
  --name NAME    the witness's key name when the key is made (e.g. witness.example.com/w1)
  --print-vkey   print the witness's verifier key (cosignature/v1, type 0x04) for RELAY_WITNESS_VKEYS
  --relay URL    the relay to witness (http:// or https://)
  --log-vkey VKEY
                 the log's verifier key ("svc relay events vkey" on the relay's host); kept in the home on
                 the first run, and a home then follows that log only
  --interval SECONDS
                 run rounds every SECONDS (1-86400) until stopped, instead of one round
  --listen HOST:PORT
                 serve C2SP tlog-witness add-checkpoint on HOST:PORT ([::1]:PORT for IPv6; plain HTTP: put
                 TLS in front of it for the Internet)
  --json         print the outcome as JSON (one line per round with --interval, per request with --listen)
  -h, --help     show this help`,
};
