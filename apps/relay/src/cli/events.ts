import { ReadModels, type Session } from '@svc/domain';
import {
  ChainError,
  eventSchemas,
  EventTooNewError,
  plural,
  unsealPersonal,
  verifySource,
  type LogSource,
  type LogVerifyReport,
  type RecordedCut,
  type ScanProgress,
} from '@svc/events';
import { CliError, colours, EXIT, line, parseFlags, progressLine, UsageError, type CliIo } from './io';
import { resolveLogSource } from './log-dir';
import { printRecordings, verifyRecordings, type RecordingsVerdict } from './recordings-verify';
import { anyVerdict, prepareAnyCheckpoint, printAnyVerdict, type AnyVerdict } from './checkpoint-note';
import { modelsFromSnapshot, type ReplayStart } from './events-pruned';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const short = (ms: number | null): string => (ms === null ? 'never' : new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + 'Z');

function chainFailure(err: unknown): never {
  if (err instanceof EventTooNewError) throw new CliError(`${err.message}\n${err.hint}`);
  if (err instanceof ChainError) {
    throw new CliError(`event log broken at seq ${err.seq} (${err.segment}): ${err.reason}\nrun "svc relay events verify" for the report`);
  }
  throw err;
}

// ---------------------------------------------------------------------------------------------- replay

export type ReplayReport = {
  /** Where the log is: a directory, a JSON-lines export, or a database URL without its password. */
  dir: string;
  store: 'file' | 'postgres';
  /** Segments of a directory; 1 for an export file or a database table. */
  segments: number;
  events: number;
  lastSeq: number;
  lastHash: string;
  tornTailBytes: number;
  at: string;
  countsByType: Record<string, number>;
  sessions: Array<{
    token_prefix: string;
    device_name: string;
    device_id: string;
    created_at: string | null;
    last_seen: string | null;
    expires_at: string | null;
    grants: Record<string, string | null>;
  }>;
  sessionsPastExpiry: number;
  pairingCodes: { ready: number; pending: number };
  rateLimitBlocks: Array<{ ip: string; kind: string; until: string | null }>;
  /** A pruned log: proven from its cut on, its state rebuilt from the home's sealed snapshot (absent: from seq 1). */
  from?: ReplayStart;
};

export async function replayReport(
  source: LogSource,
  at: Date,
  onProgress?: (p: ScanProgress) => void,
  env: NodeJS.ProcessEnv = {},
): Promise<ReplayReport> {
  let models = new ReadModels();
  let countsByType: Record<string, number> = {};
  let from: ReplayStart | undefined;
  let summary;
  try {
    summary = await source.walk({
      onProgress,
      onEvent: (e) => {
        // The report shows no personal content: it replays as forgotten (no data key is read here).
        models.apply(eventSchemas.upcast(unsealPersonal(e, () => undefined)));
        countsByType[e.type] = (countsByType[e.type] ?? 0) + 1;
      },
    });
    if (summary.cut) {
      // Pruned: the state before the cut is the snapshot's; the walk after it, linked to the snapshot's record.
      ({ models, start: from } = await modelsFromSnapshot(env, summary.cut));
      const start = from;
      countsByType = {};
      await source.walk({
        onEvent: (e) => {
          if (e.seq === start.snapshotSeq && e.hash !== start.snapshotHash)
            throw new ChainError(e.seq, '(snapshot)', 'the snapshot does not match this record');
          if (e.seq <= start.snapshotSeq) return;
          models.apply(eventSchemas.upcast(unsealPersonal(e, () => undefined)));
          countsByType[e.type] = (countsByType[e.type] ?? 0) + 1;
        },
      });
    }
  } catch (err) {
    chainFailure(err);
  }
  const view = (s: Session) => {
    const grants: Record<string, string | null> = {};
    for (const [ch, until] of Object.entries(s.grants)) if (until === null || until > at.getTime()) grants[ch] = iso(until);
    return {
      token_prefix: s.tokenPrefix,
      device_name: s.deviceName,
      device_id: s.deviceId,
      created_at: iso(s.createdAt),
      last_seen: iso(s.lastSeen),
      expires_at: iso(s.expiresAt),
      grants,
    };
  };
  const live = models.pairing.live(at);
  return {
    dir: source.location,
    store: source.kind,
    segments: await source.containers(),
    events: summary.records,
    lastSeq: summary.lastSeq,
    lastHash: summary.lastHash,
    tornTailBytes: summary.tornTailBytes,
    at: at.toISOString(),
    countsByType: Object.fromEntries(Object.entries(countsByType).sort(([a], [b]) => a.localeCompare(b))),
    sessions: models.sessions
      .active(at)
      .toSorted((a, b) => b.lastSeen - a.lastSeen)
      .map(view),
    sessionsPastExpiry: models.sessions.overdue(at).length,
    pairingCodes: { ready: live.filter((c) => c.state === 'ready').length, pending: live.filter((c) => c.state === 'pending').length },
    rateLimitBlocks: models.rateLimit.activeBlocks(at).map((b) => ({ ip: b.ip, kind: b.kind, until: iso(b.until) })),
    ...(from ? { from } : {}),
  };
}

export async function replayCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags('relay events replay', args, {
    log: { type: 'string' },
    archive: { type: 'string' },
    at: { type: 'string' },
    json: { type: 'boolean' },
  });
  const at = v.at === undefined ? new Date() : new Date(v.at);
  if (Number.isNaN(at.getTime())) throw new UsageError(`--at ${v.at}: not an ISO time like 2026-03-01T12:00:00Z`, 'relay events replay');
  const progress = progressLine(io.stderr, 'replaying');
  let r: ReplayReport;
  const source = resolveLogSource(io.env, v.log, v.archive);
  try {
    r = await replayReport(source, at, progress.update, io.env);
  } finally {
    progress.done();
    await source.close();
  }
  if (v.json) {
    line(io.stdout, JSON.stringify(r, null, 2));
    return EXIT.ok;
  }
  const c = colours(io.stdout, io.env);
  const out = (s = '') => line(io.stdout, s);
  out(`${c.bold('event log')}   ${r.dir} (${containersText(r.store, r.segments)})`);
  out(`${c.bold('records')}     ${r.events} replayed, last seq ${r.lastSeq}, chain ${c.green('ok')}`);
  if (r.from) {
    const f = r.from;
    out(
      `${c.yellow('pruned')}      verified from seq ${f.cut.cutSeq + 1} (cut at seq ${f.cut.cutSeq} of ${f.cut.cutAt}, recorded at seq ${f.cut.recordedAt})`,
    );
    out(`            state before it from the snapshot of seq ${f.snapshotSeq} (${f.snapshotAt}), sealed with the home's key:`);
    out(`            a weaker proof than a replay from seq 1 (add --archive DIR with the pruned segments for that)`);
  }
  out(`${c.bold('last hash')}   ${r.lastHash}`);
  if (r.tornTailBytes > 0)
    out(`${c.yellow('torn tail')}   ${r.tornTailBytes} bytes of an interrupted write after seq ${r.lastSeq} (the relay cuts it at its next start)`);
  out();
  out(
    c.bold(`sessions active at ${r.at}: ${r.sessions.length}`) +
      (r.sessionsPastExpiry ? c.dim(`  (+${r.sessionsPastExpiry} past expiry, not yet swept)`) : ''),
  );
  if (r.sessions.length > 0) {
    const rows = r.sessions.map((s) => [
      s.token_prefix,
      s.device_name,
      short(s.created_at === null ? null : Date.parse(s.created_at)),
      short(s.expires_at === null ? null : Date.parse(s.expires_at)),
      Object.entries(s.grants)
        .map(([ch, until]) => `${ch}${until === s.expires_at ? '' : `<${short(until === null ? null : Date.parse(until))}`}`)
        .join(' ') || '(none)',
    ]);
    for (const row of table([['PREFIX', 'DEVICE', 'CREATED', 'EXPIRES', 'GRANTS (until the session ends unless <time)'], ...rows])) out('  ' + row);
  }
  out();
  out(`${c.bold('pairing codes')} live: ${r.pairingCodes.ready} usable, ${r.pairingCodes.pending} awaiting approval`);
  out(
    `${c.bold('rate-limit blocks')} ${r.rateLimitBlocks.length}` +
      (r.rateLimitBlocks.length ? ': ' + r.rateLimitBlocks.map((b) => `${b.ip} (${b.kind}) until ${b.until}`).join(', ') : ''),
  );
  out();
  out(c.bold('events by type'));
  const width = Math.max(0, ...Object.keys(r.countsByType).map((k) => k.length));
  for (const [type, n] of Object.entries(r.countsByType)) out(`  ${type.padEnd(width)}  ${String(n).padStart(8)}`);
  return EXIT.ok;
}

function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '));
}

// ---------------------------------------------------------------------------------------------- verify

/** `3 segments`, or the table a database log lives in. */
function containersText(store: 'file' | 'postgres', n: number): string {
  return store === 'postgres' ? 'table svc_relay_events' : plural(n, 'segment');
}

export async function verifyCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags('relay events verify', args, {
    log: { type: 'string' },
    archive: { type: 'string' },
    json: { type: 'boolean' },
    checkpoint: { type: 'string' },
    'public-key': { type: 'string' },
    vkey: { type: 'string', multiple: true },
  });
  for (const flag of ['public-key', 'vkey'] as const)
    if (v[flag] !== undefined && v.checkpoint === undefined) throw new UsageError(`--${flag} goes with --checkpoint FILE`, 'relay events verify');
  const checkpoint = v.checkpoint === undefined ? null : prepareAnyCheckpoint(v.checkpoint, v['public-key'], v.vkey ?? [], io.env);
  const source = resolveLogSource(io.env, v.log, v.archive);
  const dir = v.archive === undefined ? source.location : `${v.archive} + ${source.location}`;
  const progress = progressLine(io.stderr, 'verifying');
  let report: LogVerifyReport;
  let verdict: AnyVerdict | null = null;
  let recordings: RecordingsVerdict | null = null;
  try {
    report = await verifySource(source, progress.update);
    if (checkpoint) verdict = await anyVerdict(checkpoint, source, report);
    // Each terminal recording still on disk against its digest in the log (recordings-verify.ts).
    if (report.ok) recordings = await verifyRecordings(source, io.env);
  } finally {
    progress.done();
    await source.close();
  }
  if (v.json) {
    const json = report.ok
      ? {
          dir,
          store: source.kind,
          ok: true,
          lastSeq: report.lastSeq,
          lastHash: report.lastHash,
          segments: report.containers,
          tornTailBytes: report.tornTailBytes,
          fromSeq: report.cut ? report.cut.cutSeq + 1 : 1,
          ...(report.cut ? { cut: report.cut } : {}),
        }
      : { dir, store: source.kind, ...report };
    const out = recordings ? { ...json, recordings } : json;
    line(io.stdout, JSON.stringify(verdict ? { ...out, checkpoint: verdict } : out, null, 2));
    return report.ok && (verdict?.ok ?? true) && (recordings?.ok ?? true) ? EXIT.ok : EXIT.failed;
  }
  const c = colours(io.stdout, io.env);
  if (report.ok) {
    line(
      io.stdout,
      `${c.green('ok')}  ${dir}: ${plural(report.records, 'record')} in ${containersText(source.kind, report.containers)}, chain intact`,
    );
    line(io.stdout, `    last seq ${report.lastSeq}, last hash ${report.lastHash}`);
    if (report.cut) line(io.stdout, `    ${cutText(report.cut)}`);
    if (report.tornTailBytes > 0) {
      line(
        io.stdout,
        `${c.yellow('note')} a torn last line of ${report.tornTailBytes} bytes follows seq ${report.lastSeq} (an interrupted write; the relay cuts it at its next start)`,
      );
    }
    const recorded = recordings ? printRecordings(io, recordings) : EXIT.ok;
    const signed = verdict ? printAnyVerdict(io, verdict) : EXIT.ok;
    return recorded === EXIT.ok ? signed : recorded;
  }
  const e = colours(io.stderr, io.env);
  line(io.stderr, `${e.red('BROKEN')}  ${dir}`);
  line(io.stderr, `first bad record: seq ${report.seq} in ${report.segment}: ${report.reason}`);
  line(io.stderr, 'every record from there on is unproven; restore the log from a backup or keep this copy as evidence');
  if (verdict) printAnyVerdict(io, verdict);
  return EXIT.failed;
}

/** Where a pruned log is proven from; one sentence for verify, replay, start-up. */
export function cutText(cut: RecordedCut): string {
  return `verified from seq ${cut.cutSeq + 1} (cut at seq ${cut.cutSeq} of ${cut.cutAt}, recorded at seq ${cut.recordedAt}; the records before it were pruned)`;
}
