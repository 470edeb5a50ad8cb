import { useId, useState } from 'react';
import type { SecretRow } from '@svc/console-api';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { DataTable, type Column } from '@/components/data-table';
import { Ago, Button, Card, EmptyState, ErrorState, InlineError, Skeleton } from '@/components/ui';
import { useForgetSecret, useSecrets, useSetSecret } from '../api/secrets';
import './secrets-card.css';

const NAME = /^[A-Za-z0-9_-]{1,40}$/;

/**
 * Named secrets an agent types with android_type_secret without ever seeing them (issue 40, item 3): add
 * or replace one (a password input; the value is sent once and never shown again, here or anywhere), the
 * list (names and times only) and Forget (its sealed value's key destroyed).
 */
export function SecretsCard() {
  const q = useSecrets();
  const set = useSetSecret();
  const forget = useForgetSecret();
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [forgetting, setForgetting] = useState<SecretRow | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const hintId = useId();
  const nameOk = NAME.test(name);
  const replacing = !!q.data?.secrets.some((s) => s.name === name);
  const submit = () => {
    if (!nameOk || !value) return;
    set.mutate(
      { name, value },
      {
        onSuccess: (a) => {
          setDone(`${a.replaced ? 'Replaced' : 'Registered'} ${a.name}`);
          setName('');
        },
        // Cleared whatever the answer: the field never keeps a value after it was sent.
        onSettled: () => setValue(''),
      },
    );
  };
  const columns: Array<Column<SecretRow>> = [
    { label: 'Name', className: 'mono', render: (s) => s.name },
    { label: 'Set', className: 'nowrap', render: (s) => <Ago at={s.updated} /> },
    { label: 'Last used', className: 'nowrap', render: (s) => <Ago at={s.last_used} never="never" /> },
    {
      label: '',
      className: 'row-actions',
      render: (s) => (
        <Button size="sm" variant="danger" onClick={() => setForgetting(s)} data-testid={`forget-secret-${s.name}`}>
          Forget…
        </Button>
      ),
    },
  ];
  return (
    <Card title="Secrets for agents">
      <p className="muted">
        An agent types one with <span className="mono">android_type_secret {'{name}'}</span> and never sees it: not in its results, the event log, the
        relay&apos;s log or here. Each value is sealed in the log under a key of its own; Forget destroys that key.
      </p>
      {q.isError ? <ErrorState what="the secrets" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.isPending ? <Skeleton lines={2} height={22} /> : null}
      {q.data && q.data.secrets.length === 0 ? (
        <EmptyState title="No secrets yet">Add one below (or: svc relay secrets set NAME); agents then type it by its name.</EmptyState>
      ) : null}
      {q.data && q.data.secrets.length > 0 ? (
        <DataTable testId="secrets" columns={columns} rows={q.data.secrets} rowKey={(s) => s.name} rowProps={(s) => ({ 'data-name': s.name })} />
      ) : null}
      <form
        className="form-actions secret-form"
        autoComplete="off"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <label className="field compact">
          <span>Name</span>
          <input
            value={name}
            maxLength={40}
            onChange={(e) => (setName(e.target.value), setDone(null))}
            aria-invalid={name !== '' && !nameOk}
            aria-describedby={hintId}
            data-testid="secret-name"
          />
        </label>
        <label className="field compact">
          <span>Value</span>
          <input
            type="password"
            value={value}
            maxLength={1024}
            autoComplete="new-password"
            onChange={(e) => setValue(e.target.value)}
            data-testid="secret-value"
          />
        </label>
        <Button type="submit" size="sm" busy={set.isPending} disabled={!nameOk || !value} data-testid="secret-save">
          {replacing ? 'Replace' : 'Add'}
        </Button>
      </form>
      <p className="field-hint secret-hint" id={hintId}>
        A name is 1 to 40 letters, digits, _ or -; a value at most 1024 characters on one line
        {q.data ? `; at most ${q.data.max} secrets` : ''}. Adding a name that exists replaces its value.
      </p>
      {done ? (
        <p className="muted" role="status" data-testid="secret-done">
          {done}.
        </p>
      ) : null}
      <InlineError error={set.error} />
      <ConfirmDialog
        item={forgetting}
        title="Forget this secret?"
        action="Forget"
        testId="confirm-forget-secret"
        mutation={{ mutate: (n, o) => forget.mutate(n, o), reset: forget.reset, isPending: forget.isPending, error: forget.error }}
        keyOf={(s) => s.name}
        onClose={() => setForgetting(null)}
      >
        {(s) => (
          <p>
            The value of <strong className="mono">{s.name}</strong> becomes unreadable for good (its key is destroyed); agents asking for it are
            refused until it is added again.
          </p>
        )}
      </ConfirmDialog>
    </Card>
  );
}
