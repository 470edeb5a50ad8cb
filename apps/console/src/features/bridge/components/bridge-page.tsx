import { useState } from 'react';
import type { BridgeActivityRow, BridgeDeviceRow, BridgeView, SafetyRow } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Ago, Button, Card, Chip, Dot, EmptyState, ErrorState, InlineError, PageHeader, Skeleton, Stat } from '@/components/ui';
import { exact, timeOfDay } from '@/lib/format';
import { useBridge } from '../api/get-bridge';
import { useSelectActive } from '../api/select-active';
import { McpPlayback } from './mcp-playback';
import { SecretsCard } from './secrets-card';

/**
 * Which phone gets a command that names none (which-phone.ts pickDevice): the one made active, else the
 * only phone on the bridge; with several and none active, a command must name its phone.
 */
function activeHint(b: BridgeView): string {
  if (b.active) return `active: ${b.active}`;
  if (b.devices.length === 1) return `the only phone (${b.devices[0].token_prefix}) gets every command`;
  if (b.devices.length === 0) return 'no phone to send commands to';
  return 'none active: a command must name its phone (?device=)';
}

const DECISION_FILTERS: Array<{ label: string; match: string[] }> = [
  { label: 'All', match: [] },
  { label: 'Blocked package', match: ['blocked_package', 'implicit_intent'] },
  { label: 'Unconfirmable', match: ['unconfirmable'] },
  { label: 'Confirmation asked', match: ['confirmation_requested'] },
  { label: 'Allowed', match: ['confirmation_allowed', 'trusted_verb'] },
  { label: 'Denied / timed out', match: ['confirmation_denied', 'confirmation_timed_out', 'confirmation_cancelled'] },
  { label: 'Auto-disable', match: ['auto_disabled'] },
  { label: 'Toggle off', match: ['master_off', 'sideload_only'] },
];

const words = (s: string) => s.replace(/_/g, ' ');
const iso = (epochS: number) => new Date(epochS * 1000).toISOString();

function decisionTone(d: string): 'good' | 'warn' | 'bad' | 'neutral' {
  if (d === 'confirmation_allowed' || d === 'trusted_verb' || d === 'allow' || d === 'exempt') return 'good';
  if (d === 'confirmation_requested') return 'warn';
  return 'bad';
}

function outcomeChip(a: BridgeActivityRow) {
  if (a.outcome === 'answered') return <Chip tone={a.status !== null && a.status < 400 ? 'good' : 'warn'}>{a.status}</Chip>;
  if (a.outcome === 'pending' || a.outcome === 'awaiting_confirmation') return <Chip tone="info">{words(a.outcome)}</Chip>;
  return <Chip tone="bad">{words(a.outcome)}</Chip>;
}

const ACTIVITY_COLUMNS: Array<Column<BridgeActivityRow>> = [
  { label: 'Time (UTC)', className: 'mono nowrap', render: (a) => timeOfDay(iso(a.at)) },
  { label: 'Device', className: 'mono', render: (a) => a.token_prefix },
  {
    label: 'Route',
    className: 'mono',
    render: (a) => (
      <>
        {a.method} {a.path}
      </>
    ),
  },
  {
    label: 'Via',
    className: 'col-opt nowrap',
    headClassName: 'col-opt',
    render: (a) => (a.via ? <span title={`MCP client "${a.client ?? ''}"`}>mcp · {a.client}</span> : <span className="muted">http</span>),
  },
  { label: 'Result', render: outcomeChip },
  {
    label: 'Latency',
    className: 'nowrap',
    render: (a) => (a.latency_ms === null ? '–' : `${a.latency_ms < 10 ? a.latency_ms.toFixed(1) : Math.round(a.latency_ms)} ms`),
  },
  {
    label: 'Safety',
    className: 'col-opt',
    headClassName: 'col-opt',
    render: (a) => (a.safety ? <Chip tone={decisionTone(a.safety)}>{words(a.safety)}</Chip> : null),
  },
];

/**
 * Who switches Device Control off once it was idle: a phone that keeps its own expiry (the app) is never given a
 * relay deadline, so its own minutes are what applies; otherwise the relay's deadline.
 */
function IdleExpiry({ d }: { d: BridgeDeviceRow }) {
  if (d.auto_disable_by === 'phone')
    return (
      <div className="muted small" title="The phone keeps its own idle timer; the relay keeps no deadline for it and never switches it off.">
        {d.auto_disable_minutes > 0
          ? `the phone switches Device Control off after ${d.auto_disable_minutes} min idle`
          : 'the phone reports no idle expiry'}
      </div>
    );
  if (!d.auto_disable_at) return null;
  return (
    <div className="muted small" title={`The relay switches Device Control off at ${exact(d.auto_disable_at * 1000)} unless a command comes first.`}>
      auto-off <Ago at={d.auto_disable_at} />
    </div>
  );
}

export function BridgePage() {
  const q = useBridge();
  const select = useSelectActive();
  const [filter, setFilter] = useState(0);
  const b = q.data;
  const shownSafety: SafetyRow[] = b
    ? b.safety.filter((s) => DECISION_FILTERS[filter].match.length === 0 || DECISION_FILTERS[filter].match.includes(s.decision))
    : [];

  const deviceColumns: Array<Column<BridgeDeviceRow>> = [
    {
      label: 'Device',
      className: 'col-device',
      render: (d) => (
        <div className="device-cell">
          <Dot on={d.online} label={d.online ? 'on the bridge' : 'gone'} />
          <div>
            <div className="strong">
              {d.device_name} {d.active ? <Chip tone="accent">active</Chip> : null}
            </div>
            <div className="muted mono small">
              {d.device_id} · {d.token_prefix}
            </div>
          </div>
        </div>
      ),
    },
    {
      label: 'Device Control',
      render: (d) => (
        <>
          {!d.device_control_supported ? (
            <Chip tone="bad">sideload build only</Chip>
          ) : d.master_enabled ? (
            <Chip tone="good">on</Chip>
          ) : (
            <Chip tone="warn">off on the phone</Chip>
          )}
          <IdleExpiry d={d} />
        </>
      ),
    },
    {
      label: 'Now',
      render: (d) => (
        <>
          <div>{d.current_app ?? <span className="muted">unknown app</span>}</div>
          <div className="muted small">
            {d.screen_on === null ? '' : d.screen_on ? 'screen on' : 'screen off'}
            {d.battery !== null ? ` · battery ${d.battery}%` : ''}
          </div>
        </>
      ),
    },
    {
      label: 'Last command',
      render: (d) => <Ago at={d.last_command_at === null ? null : d.last_command_at} never="none yet" />,
    },
    {
      label: 'Actions',
      srOnly: true,
      className: 'row-actions',
      render: (d) =>
        d.active ? null : (
          <Button size="sm" busy={select.isPending && select.variables === d.token_prefix} onClick={() => select.mutate(d.token_prefix)}>
            Make active
          </Button>
        ),
    },
  ];

  return (
    <>
      <PageHeader title="Bridge" subtitle="Phones offering Device Control, what was asked of them, and what the safety pipeline decided." />
      {q.isError ? <ErrorState what="the bridge" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.isPending ? <Skeleton lines={6} height={22} /> : null}
      {b ? (
        <>
          <div className="stat-grid">
            <Stat label="Bridge phones" value={b.devices.length} hint={activeHint(b)} />
            <Stat label="Commands" value={b.commands_total} hint={`${b.in_flight} in flight`} />
            <Stat
              label="Awaiting confirmation"
              value={b.pending_confirmations.length}
              tone={b.pending_confirmations.length ? 'warn' : undefined}
              hint="destructive verbs the phone must allow"
            />
            <Stat
              label="Blocked or denied"
              value={
                (b.decisions.blocked_package ?? 0) +
                (b.decisions.implicit_intent ?? 0) +
                (b.decisions.unconfirmable ?? 0) +
                (b.decisions.confirmation_denied ?? 0) +
                (b.decisions.confirmation_timed_out ?? 0)
              }
              hint="by the safety pipeline, since start"
            />
          </div>
          <Card title="Devices">
            {b.devices.length === 0 ? (
              <EmptyState title="No phone on the bridge">
                A paired phone with the bridge grant appears here when its app reports its Device Control status.
              </EmptyState>
            ) : (
              <DataTable
                testId="bridge-devices"
                columns={deviceColumns}
                rows={b.devices}
                rowKey={(d) => d.token_prefix}
                rowProps={(d) => ({ 'data-prefix': d.token_prefix })}
              />
            )}
            <InlineError error={select.error} />
          </Card>
          <Card title="Commands">
            {b.activity.length === 0 ? (
              <EmptyState title="No commands yet">
                Device Control calls from the agent (through /bridge routes) show here with their outcome and latency.
              </EmptyState>
            ) : (
              <DataTable testId="bridge-activity" layout="log" columns={ACTIVITY_COLUMNS} rows={b.activity} rowKey={(a) => a.request_id} />
            )}
          </Card>
          <McpPlayback />
          <Card title="Safety decisions">
            <div className="family-chips" role="group" aria-label="Decision filter">
              {DECISION_FILTERS.map((f, i) => (
                <button
                  key={f.label}
                  type="button"
                  className={`family-chip ${filter === i ? 'on' : ''}`}
                  aria-pressed={filter === i}
                  onClick={() => setFilter(i)}
                >
                  {f.label}
                </button>
              ))}
            </div>
            {shownSafety.length === 0 ? (
              <EmptyState title={filter === 0 ? 'No safety decisions yet' : 'None of this kind'}>
                Blocked packages, destructive-verb confirmations and auto-disable show here with their reason.
              </EmptyState>
            ) : (
              <ol className="event-list safety-list">
                {shownSafety.map((s) => (
                  <li key={s.seq} className="event-item">
                    <span className="event-time mono" title={exact(s.at * 1000)}>
                      {timeOfDay(iso(s.at))}
                    </span>
                    <Chip tone={decisionTone(s.decision)}>{words(s.decision)}</Chip>
                    <span className="event-text">
                      {s.reason}
                      {s.path ? <span className="muted mono"> · {s.path}</span> : null}
                      {s.package ? <span className="muted mono"> · {s.package}</span> : null}
                      {s.verb ? <span className="muted"> · “{s.verb}”</span> : null}
                      {s.via ? (
                        <span className="muted">
                          {' '}
                          · via {s.via} ({s.client})
                        </span>
                      ) : null}
                      <span className="muted mono"> · {s.token_prefix}</span>
                    </span>
                  </li>
                ))}
              </ol>
            )}
          </Card>
          <SecretsCard />
        </>
      ) : null}
    </>
  );
}
