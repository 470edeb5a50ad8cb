import { useState } from 'react';
import type { ForgetAnswer, PersonalDataDevice, PersonalDataView } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Ago, Button, Card, ErrorState, Skeleton } from '@/components/ui';
import { plural } from '@/lib/format';
import { usePersonalData } from '../api/get-personal-data';
import { useSessions } from '../api/get-sessions';
import { ForgetBeforeForm } from './forget-before-form';
import { ForgetDialog, type ForgetItem } from './forget-dialog';
import { ForgettingsTable } from './forgettings-table';
import { DeviceWho, hourText } from './personal-words';
import './personal-content.css';

/**
 * Personal content (Devices page): what is sealed and where its keys are, the keys per device with Forget,
 * forgetting everything before a time, and the recent forgettings. Never the content, never a key.
 */
export function PersonalContent() {
  const q = usePersonalData();
  const names = useDeviceNames();
  const [forgetting, setForgetting] = useState<ForgetItem | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const v = q.data;

  const onForgotten = (answer: ForgetAnswer, item: ForgetItem) =>
    setDone(
      answer.keys === 0
        ? `Nothing was left to forget for ${item.label}.`
        : `Forgot ${item.target.device !== undefined ? `the content of ${item.label}` : `everything before ${item.label}`}: ${plural(answer.keys, 'hourly data key')} destroyed${answer.seq !== null ? ` (event #${answer.seq})` : ''}.`,
    );

  const columns: Array<Column<PersonalDataDevice>> = [
    { label: 'Device', render: (d) => <DeviceWho device={d.device} name={d.device_name} /> },
    { label: 'Hourly keys', className: 'nowrap', cellProps: () => ({ 'data-testid': 'personal-keys' }), render: (d) => d.keys },
    { label: 'First hour', className: 'nowrap', render: (d) => <Hour s={d.oldest_hour} /> },
    { label: 'Last hour', className: 'nowrap', render: (d) => <Hour s={d.newest_hour} /> },
    {
      label: 'Actions',
      srOnly: true,
      className: 'row-actions',
      render: (d) => {
        const label = d.device === 'host' ? 'host' : `${d.device_name ?? 'an unpaired device'} (${d.device})`;
        return (
          <Button
            size="sm"
            variant="danger"
            onClick={() => setForgetting({ target: { device: d.device }, label })}
            aria-label={`Forget content of ${label}`}
          >
            Forget
          </Button>
        );
      },
    },
  ];

  return (
    <Card title="Personal content" id="personal-content">
      {q.isPending ? <Skeleton lines={3} height={20} /> : null}
      {q.isError ? <ErrorState what="personal content" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {v ? (
        <>
          <Explainer v={v} />
          {done ? (
            <div className="status-banner good personal-done" role="status" data-testid="personal-done">
              <span>{done}</span>
              <button type="button" className="link-btn" onClick={() => setDone(null)}>
                Dismiss
              </button>
            </div>
          ) : null}
          {v.devices.length === 0 ? (
            <p className="muted" data-testid="personal-empty">
              No sealed content now. Notification titles and texts, Thread messages and replies are sealed by device and hour as they arrive.
            </p>
          ) : (
            <DataTable
              testId="personal-devices"
              columns={columns}
              rows={v.devices}
              rowKey={(d) => d.device}
              rowProps={(d) => ({ 'data-device': d.device })}
            />
          )}
          {v.keys > 0 ? <ForgetBeforeForm onForget={setForgetting} /> : null}
          <ForgettingsTable rows={v.forgettings} names={names} />
        </>
      ) : null}
      <ForgetDialog item={forgetting} onClose={() => setForgetting(null)} onForgotten={onForgotten} />
    </Card>
  );
}

function Explainer({ v }: { v: PersonalDataView }) {
  return (
    <div className="personal-explainer">
      <p>
        Notification titles and texts, Thread messages and replies are sealed in the event log (AES-256-GCM) under one data key per device and hour,
        and so are terminal recordings on disk; the rest of each event is readable.{' '}
        {v.where === 'none' ? (
          <span className="warn-text">This relay has no key store: nothing is sealed.</span>
        ) : (
          <>
            The keys ({v.keys} now) are kept outside the log, {v.store === 'postgres' ? 'in ' : 'in the file '}
            <code className="personal-where" data-testid="personal-where">
              {v.where}
            </code>
            .
          </>
        )}{' '}
        Forgetting destroys keys: the content they sealed can never be read again.
      </p>
      <p className="muted small" data-testid="personal-retention">
        {v.retention_days === 0 ? (
          <>
            Kept until forgotten (<code>RELAY_PERSONAL_DATA_RETENTION_DAYS</code> is 0: only the operator forgets).
          </>
        ) : (
          <>
            Forgotten automatically after {plural(v.retention_days, 'day')} (<code>RELAY_PERSONAL_DATA_RETENTION_DAYS</code>).
          </>
        )}
      </p>
    </div>
  );
}

function Hour({ s }: { s: number }) {
  return (
    <>
      <span>{hourText(s)}</span>
      <div className="muted small">
        <Ago at={s} />
      </div>
    </>
  );
}

/** Device names by token prefix, from the sessions the page already holds (a forgetting names only the prefix). */
function useDeviceNames(): Map<string, string> {
  const sessions = useSessions();
  return new Map((sessions.data?.sessions ?? []).map((s) => [s.token_prefix, s.device_name]));
}
