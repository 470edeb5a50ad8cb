import type { SessionRow } from '@svc/console-api';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { useEndTrust } from '../api/end-trust';

export function EndTrustDialog({ session, onClose }: { session: SessionRow | null; onClose: () => void }) {
  const end = useEndTrust();
  return (
    <ConfirmDialog
      item={session}
      title="End this device's renewal?"
      action="End renewal"
      testId="confirm-end-trust"
      mutation={end}
      keyOf={(s) => s.token_prefix}
      onClose={onClose}
    >
      {(s) => (
        <p>
          <strong>{s.device_name}</strong> <span className="mono muted">({s.token_prefix})</span> keeps its current session until it expires, but can
          no longer renew it with its refresh token: after that it must pair with a new code. To cut it off now, revoke it instead.
        </p>
      )}
    </ConfirmDialog>
  );
}
