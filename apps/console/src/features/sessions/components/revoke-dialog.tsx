import type { SessionRow } from '@svc/console-api';
import { Button, Dialog, InlineError } from '@/components/ui';
import { useRevokeSession } from '../api/revoke-session';

export function RevokeDialog({ session, onClose }: { session: SessionRow | null; onClose: () => void }) {
  const revoke = useRevokeSession();
  const close = () => {
    revoke.reset();
    onClose();
  };
  return (
    <Dialog
      open={session !== null}
      title="Revoke this device?"
      onClose={close}
      footer={
        <>
          <Button onClick={close}>Cancel</Button>
          <Button
            variant="danger"
            busy={revoke.isPending}
            onClick={() => session && revoke.mutate(session.token_prefix, { onSuccess: close })}
            data-testid="confirm-revoke"
          >
            Revoke {session?.device_name}
          </Button>
        </>
      }
    >
      {session ? (
        <>
          <p>
            <strong>{session.device_name}</strong> <span className="mono muted">({session.token_prefix})</span> loses access at once: its sockets are
            closed and its token stops working. To use the relay again it must pair with a new code.
          </p>
          <InlineError error={revoke.error} />
        </>
      ) : null}
    </Dialog>
  );
}
