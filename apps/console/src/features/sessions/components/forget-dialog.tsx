import type { ForgetAnswer } from '@svc/console-api';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { InlineError } from '@/components/ui';
import { plural } from '@/lib/format';
import { useForgetPersonalData, useForgetPreview, type ForgetTarget } from '../api/forget-personal-data';

/** A forgetting to confirm: what goes, and its words ("Phone A (ab12cd34)", "everything before 2026-11-20 14:00 UTC"). */
export type ForgetItem = { target: ForgetTarget; label: string };

/**
 * Forgetting behind a confirm: the relay is asked first (a dry run) how many data keys would go, and the
 * dialog says so before the operator destroys them.
 */
export function ForgetDialog({
  item,
  onClose,
  onForgotten,
}: {
  item: ForgetItem | null;
  onClose: () => void;
  onForgotten: (answer: ForgetAnswer, item: ForgetItem) => void;
}) {
  const preview = useForgetPreview(item?.target ?? null);
  const forget = useForgetPersonalData();
  const keys = preview.data?.keys;
  const mutation = {
    mutate: (_key: string, options: { onSuccess: () => void }) =>
      item &&
      forget.mutate(item.target, {
        onSuccess: (answer) => {
          onForgotten(answer, item);
          options.onSuccess();
        },
      }),
    reset: forget.reset,
    isPending: forget.isPending,
    error: forget.error,
  };
  return (
    <ConfirmDialog
      item={item}
      title="Forget this content?"
      action={keys ? `Forget ${plural(keys, 'key')}` : 'Forget'}
      testId="confirm-forget"
      mutation={mutation}
      keyOf={(i) => i.target.device ?? i.target.before ?? ''}
      onClose={onClose}
      disabled={!keys}
    >
      {(i) => (
        <>
          <p>
            {i.target.device !== undefined ? (
              <>
                The notification titles and texts, Thread messages and replies of <strong>{i.label}</strong>.
              </>
            ) : (
              <>
                The notification titles and texts, Thread messages and replies of every device, sealed in hours that began before{' '}
                <strong>{i.label}</strong> (keys are hourly: the rest of the hour that time falls in goes too).
              </>
            )}
          </p>
          <p data-testid="forget-dry-run" aria-live="polite">
            {preview.isPending ? <span className="muted">Asking the relay how many data keys this would destroy…</span> : null}
            {keys === 0 ? <span className="muted">Nothing to forget: no data key is left for this.</span> : null}
            {keys ? (
              <>
                The relay would destroy <strong>{plural(keys, 'hourly data key')}</strong>.
              </>
            ) : null}
          </p>
          <InlineError error={preview.error} />
          <p className="warn-note">
            <strong>This cannot be undone.</strong> Once a key is destroyed, what it sealed can never be read again: not by the relay, a replay, nor
            anyone with a copy of the log. The rest of each event (who, when, which app or chat) stays, and the chain still verifies.
          </p>
        </>
      )}
    </ConfirmDialog>
  );
}
