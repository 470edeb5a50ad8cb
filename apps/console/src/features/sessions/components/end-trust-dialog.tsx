import type { SessionRow } from '@svc/console-api';
import { Button, Dialog, InlineError } from '@/components/ui';
import { useEndTrust } from '../api/end-trust';

export function EndTrustDialog({ session, onClose }: { session: SessionRow | null; onClose: () => void }) {
  const end = useEndTrust();
  const close = () => {
    end.reset();
    onClose();
  };
  return (
    <Dialog
      open={session !== null}
      title="End this device's renewal?"
      onClose={close}
      footer={
        <>
          <Button onClick={close}>Cancel</Button>
          <Button
            variant="danger"
            busy={end.isPending}
            onClick={() => session && end.mutate(session.token_prefix, { onSuccess: close })}
            data-testid="confirm-end-trust"
          >
            End renewal
          </Button>
        </>
      }
    >
      {session ? (
        <>
          <p>
            <strong>{session.device_name}</strong> <span className="mono muted">({session.token_prefix})</span> keeps its current session until it
            expires, but can no longer renew it with its refresh token: after that it must pair with a new code. To cut it off now, revoke it instead.
          </p>
          <InlineError error={end.error} />
        </>
      ) : null}
    </Dialog>
  );
}
