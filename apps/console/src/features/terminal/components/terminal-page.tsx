import { useState } from 'react';
import type { ShellRow } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Ago, Button, Card, Chip, EmptyState, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { useRecordings } from '../api/get-recordings';
import { useTerminal } from '../api/get-terminal';
import { EndShellDialog } from './end-shell-dialog';
import { RecordingsCard } from './recordings-card';

const SHELL_COLUMNS: Array<Column<ShellRow>> = [
  { label: 'Session', className: 'strong', render: (s) => s.session_name },
  {
    label: 'Device',
    render: (s) => (
      <>
        <span className="strong">{s.device_name}</span> <span className="mono muted small">{s.token_prefix}</span>
      </>
    ),
  },
  {
    label: 'Process',
    className: 'mono small',
    render: (s) => (
      <>
        {s.shell} · pid {s.pid} · {s.cols}×{s.rows}
      </>
    ),
  },
  {
    label: 'State',
    render: (s) =>
      s.attached ? (
        <>
          <Chip tone="good">attached</Chip>
          {s.paused ? (
            <>
              {' '}
              <Chip tone="warn">output paused: slow phone</Chip>
            </>
          ) : null}
        </>
      ) : (
        <>
          <Chip tone="warn">detached</Chip>{' '}
          <span className="muted small">
            ends <Ago at={s.grace_expires_at} />
          </span>
        </>
      ),
  },
  { label: 'Opened', render: (s) => <Ago at={s.opened_at} /> },
];

export function TerminalPage() {
  const q = useTerminal();
  const t = q.data;
  const recording = useRecordings().data?.settings;
  const [ending, setEnding] = useState<ShellRow | null>(null);
  const columns: Array<Column<ShellRow>> = [
    ...SHELL_COLUMNS,
    {
      label: 'Actions',
      srOnly: true,
      className: 'row-actions',
      render: (s) => (
        <>
          <Button size="sm" variant="danger" onClick={() => setEnding(s)} aria-label={`End shell ${s.session_name} of ${s.token_prefix}`}>
            End shell
          </Button>
        </>
      ),
    },
  ];
  return (
    <>
      <PageHeader
        title="Terminal"
        subtitle={
          recording?.enabled
            ? `Shells and TUI processes that phones hold open on this host. Every shell is recorded (${recording.input ? 'output and typed input' : 'its output, not what is typed'}).`
            : 'Shells and TUI processes that phones hold open on this host. Shells are not recorded.'
        }
      />
      {q.isError ? <ErrorState what="terminal state" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.isPending ? <Skeleton lines={4} height={20} /> : null}
      {t ? (
        <>
          <Card title={`Shells${t.shells.length ? ` (${t.shells.length})` : ''}`}>
            {t.shells.length === 0 ? (
              <EmptyState title="No shells open">A phone with the terminal grant opens one from its Terminal screen.</EmptyState>
            ) : (
              <DataTable
                testId="terminal-shells"
                columns={columns}
                rows={t.shells}
                rowKey={(s) => s.shell_id}
                rowProps={(s) => ({ 'data-shell': s.shell_id })}
              />
            )}
          </Card>
          <Card title={`TUI processes${t.tuis.length ? ` (${t.tuis.length})` : ''}`}>
            {t.tuis.length === 0 ? (
              <EmptyState title="No TUI running">The TUI gateway (RELAY_TUI_COMMAND) starts when a phone attaches to it.</EmptyState>
            ) : (
              <ul className="code-list">
                {t.tuis.map((u) => (
                  <li key={u.tui_id}>
                    <span className="mono">{u.program}</span>
                    <span className="muted small">
                      pid {u.pid} · <span className="mono">{u.token_prefix}</span>
                    </span>
                    <span className="code-expiry muted small">
                      started <Ago at={u.started_at} />
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </Card>
          <RecordingsCard />
        </>
      ) : null}
      <EndShellDialog shell={ending} onClose={() => setEnding(null)} />
    </>
  );
}
