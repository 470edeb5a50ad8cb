import { useId, useState } from 'react';
import { Button } from '@/components/ui';
import type { ForgetItem } from './forget-dialog';

/** "Forget everything before <UTC date and time>": opens the same dry-run-then-confirm dialog as a device's Forget. */
export function ForgetBeforeForm({ onForget }: { onForget: (item: ForgetItem) => void }) {
  const [at, setAt] = useState('');
  const hintId = useId();
  const submit = () => at && onForget({ target: { before: `${at}:00Z` }, label: `${at.replace('T', ' ')} UTC` });
  return (
    <form
      className="personal-part forget-before"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <h3>Forget by time</h3>
      <div className="form-actions">
        <label className="field compact">
          <span>Forget everything before (UTC)</span>
          <input type="datetime-local" value={at} onChange={(e) => setAt(e.target.value)} aria-describedby={hintId} data-testid="forget-before-at" />
        </label>
        <Button type="submit" variant="danger" size="sm" disabled={!at} data-testid="forget-before">
          Forget before…
        </Button>
      </div>
      <p className="field-hint" id={hintId}>
        Every device&apos;s content sealed in hours that began before that time. You see how many keys would go before anything is destroyed.
      </p>
    </form>
  );
}
