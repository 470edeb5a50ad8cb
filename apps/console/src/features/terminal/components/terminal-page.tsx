import { Ago, Card, Chip, EmptyState, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { useTerminal } from '../api/get-terminal';

const ms = (s: number | null) => (s === null ? null : s * 1000);

export function TerminalPage() {
  const q = useTerminal();
  const t = q.data;
  return (
    <>
      <PageHeader
        title="Terminal"
        subtitle="Shells and TUI processes that phones hold open on this host. What is typed and shown in them is never recorded."
      />
      {q.isError ? <ErrorState what="terminal state" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.isPending ? <Skeleton lines={4} height={20} /> : null}
      {t ? (
        <>
          <Card title={`Shells${t.shells.length ? ` (${t.shells.length})` : ''}`}>
            {t.shells.length === 0 ? (
              <EmptyState title="No shells open">A phone with the terminal grant opens one from its Terminal screen.</EmptyState>
            ) : (
              <div className="table-wrap">
                <table className="table responsive" data-testid="terminal-shells">
                  <thead>
                    <tr>
                      <th scope="col">Session</th>
                      <th scope="col">Device</th>
                      <th scope="col">Process</th>
                      <th scope="col">State</th>
                      <th scope="col">Opened</th>
                    </tr>
                  </thead>
                  <tbody>
                    {t.shells.map((s) => (
                      <tr key={s.shell_id}>
                        <td data-label="Session" className="strong">
                          {s.session_name}
                        </td>
                        <td data-label="Device">
                          <span className="mono">{s.token_prefix}</span> <span className="muted small">{s.device_id}</span>
                        </td>
                        <td data-label="Process" className="mono small">
                          {s.shell} · pid {s.pid} · {s.cols}×{s.rows}
                        </td>
                        <td data-label="State">
                          {s.attached ? (
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
                                ends <Ago ms={ms(s.grace_expires_at)} />
                              </span>
                            </>
                          )}
                        </td>
                        <td data-label="Opened">
                          <Ago ms={ms(s.opened_at)} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
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
                      started <Ago ms={ms(u.started_at)} />
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </Card>
        </>
      ) : null}
    </>
  );
}
