import type { ForgettingRow } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Ago } from '@/components/ui';
import { exact } from '@/lib/format';
import { DeviceWho } from './personal-words';

const SCOPE: Record<ForgettingRow['scope'], string> = {
  device: 'one device, asked by the operator',
  before: 'everything before a time',
  retention: 'past the retention period',
  revoked: 'with the device, when it was revoked',
  secret: 'a named secret, forgotten or replaced (Bridge page)',
};

/** The latest forgettings (the log keeps them all): what went, whose, before when, how many keys, by whom. */
export function ForgettingsTable({ rows, names }: { rows: ForgettingRow[]; names: Map<string, string> }) {
  const columns: Array<Column<ForgettingRow>> = [
    { label: 'When', className: 'nowrap', render: (f) => <Ago at={f.at} /> },
    { label: 'What', render: (f) => SCOPE[f.scope] ?? f.scope },
    {
      label: 'Device',
      render: (f) => (f.device === null ? <span className="muted">every device</span> : <DeviceWho device={f.device} name={names.get(f.device)} />),
    },
    {
      label: 'Before',
      className: 'nowrap',
      render: (f) => (f.before === null ? <span className="muted">any time</span> : `${exact(Date.parse(f.before)).slice(0, 16)} UTC`),
    },
    { label: 'Keys', className: 'nowrap', render: (f) => f.keys },
    { label: 'By', className: 'nowrap mono small', render: (f) => f.by },
  ];
  return (
    <div className="personal-part">
      <h3>Recent forgettings</h3>
      {rows.length === 0 ? (
        <p className="muted small">Nothing forgotten yet.</p>
      ) : (
        <DataTable
          testId="personal-forgettings"
          columns={columns}
          rows={rows}
          rowKey={(f) => f.seq}
          rowProps={(f) => ({ 'data-seq': String(f.seq) })}
        />
      )}
    </div>
  );
}
