import { lazy, Suspense, useState } from 'react';
import type { RecordingRow } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Ago, Button, Card, Chip, EmptyState, ErrorState, Skeleton } from '@/components/ui';
import { bytes, duration } from '@/lib/format';
import { recordingUrl, useRecordings } from '../api/get-recordings';
import './recordings-card.css';

// The player (asciinema-player and its terminal emulator) loads with the first Play, not with the page.
const RecordingPlayer = lazy(() => import('./recording-player').then((m) => ({ default: m.RecordingPlayer })));

const short = (id: string) => id.slice(0, 8);

/** Why a recording stopped before its shell ended, as the chip says it. */
const STOPPED: Record<NonNullable<RecordingRow['stopped']>, string> = {
  max_bytes: 'its size cap',
  total_bytes: 'the total cap',
  disk_low: 'disk almost full',
  disk_stalled: 'disk not answering',
  write_failed: 'a write failed',
  forgotten: 'its device forgotten',
};

const COLUMNS: Array<Column<RecordingRow>> = [
  {
    label: 'Device',
    render: (r) =>
      r.token_prefix ? (
        <>
          <span className="strong">{r.device_name}</span> <span className="mono muted small">{r.token_prefix}</span>
        </>
      ) : (
        <span className="muted">unknown</span>
      ),
  },
  {
    label: 'Shell',
    render: (r) => (
      <>
        <span className="strong">{r.session_name || 'shell'}</span> <span className="mono muted small">{short(r.shell_id)}</span>
        {r.truncated ? (
          <>
            {' '}
            <Chip tone="warn">{r.stopped ? `truncated: ${STOPPED[r.stopped]}` : 'truncated'}</Chip>
          </>
        ) : null}
        {r.input ? (
          <>
            {' '}
            <Chip tone="warn">with input</Chip>
          </>
        ) : null}
        {r.recovered ? (
          <>
            {' '}
            <Chip>recovered</Chip>
          </>
        ) : null}
      </>
    ),
  },
  { label: 'Started', render: (r) => <Ago at={r.started_at} /> },
  { label: 'Duration', className: 'num', render: (r) => duration(r.duration_ms / 1000) },
  { label: 'Size', className: 'num', render: (r) => bytes(r.size_bytes) },
];

/** The shells' recordings (RELAY_TERMINAL_RECORDING): newest first, each played here or downloaded. */
export function RecordingsCard() {
  const q = useRecordings();
  const v = q.data;
  const [playing, setPlaying] = useState<RecordingRow | null>(null);
  const columns: Array<Column<RecordingRow>> = [
    ...COLUMNS,
    {
      label: 'Actions',
      srOnly: true,
      className: 'row-actions',
      render: (r) => (
        <>
          <Button
            size="sm"
            variant={playing?.recording_id === r.recording_id ? 'primary' : 'default'}
            onClick={() => setPlaying(r)}
            aria-label={`Play the recording of ${r.session_name || 'shell'} ${short(r.shell_id)}`}
          >
            Play
          </Button>{' '}
          <a
            className="btn btn-default btn-sm"
            href={recordingUrl(r.recording_id)}
            download={`${r.recording_id}.cast`}
            aria-label={`Download the recording of ${r.session_name || 'shell'} ${short(r.shell_id)}`}
          >
            Download
          </a>
        </>
      ),
    },
  ];
  const settings = v?.settings;
  const title = `Recordings${v?.recordings.length ? ` (${v.recordings.length}, ${bytes(v.total_bytes)})` : ''}`;
  return (
    <Card
      title={title}
      actions={
        settings ? (
          <Chip tone={settings.enabled ? 'good' : undefined}>
            {settings.enabled ? `recording${settings.input ? ' output and input' : ' output'}` : 'recording off'}
          </Chip>
        ) : null
      }
      id="recordings"
    >
      {q.isError ? <ErrorState what="recordings" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.isPending ? <Skeleton lines={2} height={20} /> : null}
      {settings && !settings.enabled ? (
        <p className="muted small" data-testid="recording-off">
          Shells are not recorded. To record every shell as an asciicast file under the relay&apos;s home, start the relay with{' '}
          <code>RELAY_TERMINAL_RECORDING=1</code> (output only; <code>RELAY_TERMINAL_RECORDING_INPUT=1</code> adds typed input, passwords included).
        </p>
      ) : null}
      {settings?.enabled ? (
        <p className="muted small">
          Each shell is kept up to {bytes(settings.max_bytes)}; past {bytes(settings.total_max_bytes)} in all, the oldest recordings are removed.{' '}
          {settings.input ? 'Typed input is recorded too.' : 'Typed input is not recorded.'}
        </p>
      ) : null}
      {v && v.recordings.length === 0 ? (
        <EmptyState title="No recordings">{settings?.enabled ? 'A shell is saved here when it ends.' : 'Nothing was recorded.'}</EmptyState>
      ) : null}
      {v && v.recordings.length > 0 ? (
        <DataTable
          testId="terminal-recordings"
          columns={columns}
          rows={v.recordings}
          rowKey={(r) => r.recording_id}
          rowProps={(r) => ({ 'data-recording': r.recording_id })}
        />
      ) : null}
      {playing ? (
        <div className="recording-view" aria-label="Recording playback">
          <div className="recording-view-head">
            <span>
              <span className="strong">{playing.session_name || 'shell'}</span>{' '}
              <span className="muted small">
                {playing.device_name || playing.token_prefix || 'unknown device'} · {duration(playing.duration_ms / 1000)} · sha256{' '}
                <span className="mono">{playing.sha256.slice(0, 16)}…</span>
              </span>
            </span>
            <Button size="sm" variant="ghost" onClick={() => setPlaying(null)}>
              Close player
            </Button>
          </div>
          <Suspense fallback={<Skeleton lines={6} height={18} />}>
            <RecordingPlayer key={playing.recording_id} url={recordingUrl(playing.recording_id)} />
          </Suspense>
        </div>
      ) : null}
    </Card>
  );
}
