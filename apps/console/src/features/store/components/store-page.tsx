import type { StoreSegment, StoreSnapshot } from '@svc/console-api';
import { Card, Chip, CopyButton, EmptyState, ErrorState, PageHeader, Skeleton, Stat } from '@/components/ui';
import { DataTable, type Column } from '@/components/data-table';
import { bytes, count, exact } from '@/lib/format';
import { useStore } from '../api/get-store';
import { CheckpointCard } from './checkpoint-card';
import { RelaysCard } from './relays-card';
import { VerifyCard } from './verify-card';
import { WitnessCard } from './witness-card';
import './store-page.css';

const SEGMENT_COLUMNS: Array<Column<StoreSegment>> = [
  { label: 'Segment', render: (s) => <span className="mono">{s.file}</span> },
  { label: 'From seq', render: (s) => `#${count(s.first_seq)}`, className: 'num' },
  { label: 'Size', render: (s) => bytes(s.bytes), className: 'num' },
];

const SNAPSHOT_COLUMNS: Array<Column<StoreSnapshot>> = [
  { label: 'Up to seq', render: (s) => `#${count(s.seq)}`, className: 'num' },
  { label: 'Taken', render: (s) => (s.at === null ? <span className="muted">unknown</span> : exact(s.at * 1000)) },
  { label: 'Size', render: (s) => bytes(s.bytes), className: 'num' },
];

export function StorePage() {
  const q = useStore();
  const s = q.data;
  return (
    <>
      <PageHeader
        title="Store"
        subtitle="Where the event log lives, how big it is, its snapshots, a full check of its hash chain, and signed checkpoints for auditors."
      />
      {q.isError && !s ? <ErrorState what="the store" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {!s && q.isPending ? <Skeleton lines={6} height={20} /> : null}
      {s ? (
        <>
          <Card title="Where the log lives">
            <div className="store-where" data-testid="store-where">
              <Chip tone="info">{s.store === 'postgres' ? 'PostgreSQL' : 'file log'}</Chip>
              <span className="mono store-location" data-testid="store-location">
                {s.location}
              </span>
              <CopyButton text={s.location} label="Copy" />
            </div>
            <div className="stat-grid store-stats" data-testid="store-stats">
              <Stat
                label="Last seq"
                value={`#${count(s.last_seq)}`}
                hint={
                  <span className="mono" title={s.last_hash}>
                    {s.last_hash.slice(0, 12)}…
                  </span>
                }
              />
              <Stat
                label="Size"
                value={bytes(s.bytes)}
                hint={
                  s.store === 'postgres'
                    ? 'table svc_relay_events, with its indexes'
                    : `${s.segment_count} segment${s.segment_count === 1 ? '' : 's'}`
                }
              />
              <Stat
                label="Snapshots"
                value={count(s.snapshots.length)}
                hint={s.snapshots[0] ? `newest up to #${count(s.snapshots[0].seq)}` : `one every ${count(s.snapshot_every)} events`}
              />
              <Stat label="Snapshot every" value={`${count(s.snapshot_every)} events`} hint="and at a clean stop" />
            </div>
          </Card>
          {s.store === 'postgres' ? <RelaysCard /> : null}
          <VerifyCard chain={s.chain} initial={s.verify} />
          <CheckpointCard cli={s.cli} />
          <WitnessCard />
          <div className="store-grid">
            {s.store === 'file' ? (
              <Card title={`Segments (${count(s.segment_count)})`}>
                {s.segments.length ? (
                  <DataTable columns={SEGMENT_COLUMNS} rows={s.segments} rowKey={(x) => x.file} testId="store-segments" />
                ) : (
                  <EmptyState title="No segment yet">The first event opens one.</EmptyState>
                )}
                {s.segment_count > s.segments.length ? <p className="muted small">The newest {s.segments.length} are listed.</p> : null}
              </Card>
            ) : null}
            <Card title="Snapshots">
              {s.snapshots.length ? (
                <DataTable columns={SNAPSHOT_COLUMNS} rows={s.snapshots} rowKey={(x) => x.seq} testId="store-snapshots" />
              ) : (
                <EmptyState title="No snapshot yet">
                  The relay writes one every {count(s.snapshot_every)} events and when it stops, so a start replays only what came after.
                </EmptyState>
              )}
            </Card>
          </div>
          <Card title="Export and check from a shell">
            <p className="muted">
              The relay&apos;s CLI reads the log beside the running relay without locking it. An export is proven record by record on the way out and
              again on arrival; <code>svc relay events import</code> copies one into an empty store (file or PostgreSQL).
            </p>
            <ul className="command-list" data-testid="store-commands">
              {s.commands.map((c) => (
                <li key={c.command}>
                  <div className="small muted">{c.label}</div>
                  <div className="command-line">
                    <code className="mono">{c.command}</code>
                    <CopyButton text={c.command} />
                  </div>
                </li>
              ))}
            </ul>
          </Card>
        </>
      ) : null}
    </>
  );
}
