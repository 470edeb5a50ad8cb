import type { ControlSessionRow, DesktopCallRow, DesktopClientRow } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Ago, Card, Chip, Dot, EmptyState, ErrorState, PageHeader, Skeleton, Stat } from '@/components/ui';
import { exact, timeOfDay } from '@/lib/format';
import { Link } from '@/lib/router';
import { useDesktop } from '../api/get-desktop';
import { DesktopTools } from './desktop-tools';

const iso = (epochS: number) => new Date(epochS * 1000).toISOString();

const OUTCOME: Record<DesktopCallRow['outcome'], { label: string; tone: 'good' | 'warn' | 'bad' | 'info' }> = {
  ok: { label: 'ok', tone: 'good' },
  tool_error: { label: 'tool error', tone: 'warn' },
  timeout: { label: 'timed out', tone: 'bad' },
  client_gone: { label: 'client left', tone: 'bad' },
  send_failed: { label: 'not sent', tone: 'bad' },
  pending: { label: 'pending', tone: 'info' },
};

function durationText(durationMs: number | null): string {
  if (durationMs === null) return '–';
  if (durationMs < 1000) return `${Math.round(durationMs)} ms`;
  return `${(durationMs / 1000).toFixed(durationMs < 10_000 ? 1 : 0)} s`;
}

/** `operator`: the agent host's tools on loopback; `device:<prefix>`: a paired device with the desktop grant. */
const requester = (actor: string) => (actor === 'operator' ? 'host (loopback)' : actor.startsWith('device:') ? actor.slice(7) : actor);

// A narrow window keeps what a call did and how long it took; when, where it went and who asked are a wider one's.
const CALL_COLUMNS: Array<Column<DesktopCallRow>> = [
  {
    label: 'Time (UTC)',
    className: 'mono nowrap col-opt',
    headClassName: 'col-opt',
    render: (c) => <span title={exact(c.sent_at * 1000)}>{timeOfDay(iso(c.sent_at))}</span>,
  },
  { label: 'Tool', className: 'mono', render: (c) => c.tool },
  { label: 'Result', render: (c) => <Chip tone={OUTCOME[c.outcome].tone}>{OUTCOME[c.outcome].label}</Chip> },
  { label: 'Duration', className: 'nowrap', render: (c) => durationText(c.duration_ms) },
  { label: 'Desktop', className: 'mono col-opt', headClassName: 'col-opt', render: (c) => c.device_id },
  { label: 'Asked by', className: 'mono col-opt', headClassName: 'col-opt', render: (c) => requester(c.requester) },
];

const CLIENT_COLUMNS: Array<Column<DesktopClientRow>> = [
  {
    label: 'Client',
    className: 'col-device',
    render: (c) => (
      <div className="device-cell">
        <Dot on={c.serving} label={c.serving ? 'serving tools' : 'connected, no tools yet'} />
        <div>
          <div className="strong">{c.device_name || <span className="muted">unnamed</span>}</div>
          <div className="muted mono small">
            {c.device_id || '–'} · {c.token_prefix}
          </div>
          <div className="muted small">{[c.host, c.platform, c.version && `v${c.version}`].filter(Boolean).join(' · ') || 'no status yet'}</div>
        </div>
      </div>
    ),
  },
  {
    label: 'Workspace',
    render: (c) =>
      c.workspace ? (
        <div data-testid="desktop-workspace">
          <div>
            <span className="strong">{c.workspace.repo_name ?? 'no repository'}</span>
            {c.workspace.git_branch ? <span className="mono small"> @ {c.workspace.git_branch}</span> : null}
          </div>
          <div className="mono small muted">{c.workspace.cwd ?? ''}</div>
          {c.workspace.git_status ? (
            <div className="muted small">
              {c.workspace.git_status.staged} staged · {c.workspace.git_status.modified} modified · {c.workspace.git_status.untracked} untracked
            </div>
          ) : null}
        </div>
      ) : (
        <span className="muted">not reported</span>
      ),
  },
  {
    label: 'Active editor',
    render: (c) =>
      c.active_editor && c.active_editor.source !== 'none' ? (
        <div data-testid="desktop-editor">
          <div>
            {c.active_editor.editor ?? <span className="muted">unknown editor</span>}{' '}
            <span className="muted small">via {c.active_editor.source}</span>
          </div>
          {c.active_editor.cwd ? <div className="mono small muted">{c.active_editor.cwd}</div> : null}
        </div>
      ) : (
        <span className="muted">none reported</span>
      ),
  },
  { label: 'Tools', render: (c) => <DesktopTools tools={c.tools} computerUse={c.computer_use} /> },
  {
    label: 'Seen',
    className: 'nowrap',
    render: (c) => (
      <>
        <Ago at={c.last_seen_at ?? c.reported_at} />
        {c.connected_at ? (
          <div className="muted small">
            connected <Ago at={c.connected_at} />
          </div>
        ) : null}
      </>
    ),
  },
];

function ControlSessions({ rows }: { rows: ControlSessionRow[] }) {
  if (rows.length === 0)
    return (
      <p className="muted small quiet-empty">
        <strong>No control sessions.</strong> A computer-use call (<span className="mono">desktop_computer_*</span>) opens one: it binds one agent run
        to one desktop and ends after 15 minutes unused, when the run changes, or when the desktop leaves.
      </p>
    );
  return (
    <ul className="code-list" data-testid="control-sessions">
      {rows.map((c) => (
        <li key={c.control_id}>
          <span className="strong">{c.target_name ?? c.target_device_id}</span>
          <span className="muted small">
            for <span className="mono">{c.requester_device_id}</span> · run <span className="mono">{c.run_id}</span>
            {c.profile ? ` · profile ${c.profile}` : ''}
          </span>
          <span className="code-expiry muted small">
            used <Ago at={c.used_at} /> · ends <Ago at={c.idle_ends_at} /> unless used
          </span>
        </li>
      ))}
    </ul>
  );
}

export function DesktopPage() {
  const q = useDesktop();
  const d = q.data;
  const total = d ? Object.values(d.outcomes).reduce((n, k) => n + k, 0) : 0;
  const failed = d ? (d.outcomes.timeout ?? 0) + (d.outcomes.client_gone ?? 0) + (d.outcomes.send_failed ?? 0) : 0;
  const serving = d ? d.clients.filter((c) => c.serving).length : 0;
  return (
    <>
      <PageHeader
        title="Desktop"
        subtitle="Desktop clients serving tools to the agent, the calls made to them (tool, outcome and duration: never arguments or results), and computer-use control sessions."
      />
      {q.isError ? <ErrorState what="desktop clients" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.isPending ? <Skeleton lines={6} height={20} /> : null}
      {d ? (
        <>
          {d.granted_sessions === 0 && d.clients.length === 0 ? (
            <div className="callout-plain" data-testid="desktop-no-grant">
              <Chip tone="warn">no desktop grant</Chip> No paired session holds the desktop grant, so no desktop client can serve tools. Pair the
              desktop CLI with the “Desktop CLI” grants on the <Link to="/pairing">Pairing</Link> page, or run{' '}
              <span className="mono">svc relay pair --grants desktop=7d</span>.
            </div>
          ) : null}
          <div className="stat-grid">
            <Stat label="Desktop clients" value={d.clients.length} hint={`${serving} serving tools`} />
            <Stat label="Tool calls" value={total} hint={`${d.in_flight} in flight`} />
            <Stat
              label="Failed calls"
              value={failed}
              tone={failed ? 'warn' : undefined}
              hint={`timed out, client left or not sent; ${d.outcomes.tool_error ?? 0} tool errors`}
            />
            <Stat label="Control sessions" value={d.control_sessions.length} hint="live computer-use sessions" />
          </div>
          <Card title="Clients">
            {d.clients.length === 0 ? (
              <EmptyState title="No desktop client connected">
                Start the desktop CLI (its daemon, or a shell that serves tools) paired with this relay: it appears here with its workspace, active
                editor and tools.
              </EmptyState>
            ) : (
              <DataTable
                testId="desktop-clients"
                columns={CLIENT_COLUMNS}
                rows={d.clients}
                rowKey={(c) => c.conn_id}
                rowProps={(c) => ({ 'data-device': c.device_id })}
              />
            )}
          </Card>
          <Card title="Tool calls">
            {d.calls.length === 0 ? (
              <p className="muted small quiet-empty">
                <strong>No tool calls yet.</strong> Calls the agent makes through <span className="mono">/desktop/&lt;tool&gt;</span> show here with
                their outcome and duration.
              </p>
            ) : (
              <DataTable
                testId="desktop-calls"
                layout="log"
                columns={CALL_COLUMNS}
                rows={d.calls}
                rowKey={(c) => c.request_id}
                rowProps={(c) => ({ 'data-tool': c.tool })}
              />
            )}
          </Card>
          <Card title="Control sessions">
            <ControlSessions rows={d.control_sessions} />
          </Card>
        </>
      ) : null}
    </>
  );
}
