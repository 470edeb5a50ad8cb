import { useState } from 'react';
import type { RevokeAnswer, SessionRow } from '@svc/console-api';
import { Button, Dialog, InlineError } from '@/components/ui';
import { plural } from '@/lib/format';
import { useRevokeSession } from '../api/revoke-session';
import './personal-content.css';

/** What the page says once a revoke went through: the device, and how many data keys of its content went with it. */
export function revokedText(session: SessionRow, answer: RevokeAnswer): string {
  const who = `${session.device_name} (${answer.revoked})`;
  if (answer.forgotten_keys === undefined) return `Revoked ${who}.`;
  if (answer.forgotten_keys === 0) return `Revoked ${who}. It had no sealed content left to forget.`;
  return `Revoked ${who} and forgot its content: ${plural(answer.forgotten_keys, 'hourly data key')} destroyed.`;
}

export function RevokeDialog({
  session,
  onClose,
  onRevoked,
}: {
  session: SessionRow | null;
  onClose: () => void;
  onRevoked: (text: string) => void;
}) {
  const revoke = useRevokeSession();
  const [forget, setForget] = useState(false);
  const close = () => {
    revoke.reset();
    setForget(false);
    onClose();
  };
  const confirm = (s: SessionRow) =>
    revoke.mutate(
      { prefix: s.token_prefix, forget },
      {
        onSuccess: (answer) => {
          onRevoked(revokedText(s, answer));
          close();
        },
      },
    );
  return (
    <Dialog
      open={session !== null}
      title="Revoke this device?"
      onClose={close}
      footer={
        <>
          <Button onClick={close}>Cancel</Button>
          <Button variant="danger" busy={revoke.isPending} onClick={() => session && confirm(session)} data-testid="confirm-revoke">
            {forget ? `Revoke and forget` : `Revoke ${session?.device_name}`}
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
          <label className="check-field">
            <input type="checkbox" checked={forget} onChange={(e) => setForget(e.target.checked)} data-testid="revoke-forget" />
            <span>
              Also forget its notification, Thread and recorded shell content
              <span className="field-hint">
                Destroys the data keys its notification titles and texts, Thread messages and replies are sealed under. This cannot be undone; the
                rest of each event stays in the log.
              </span>
            </span>
          </label>
          <InlineError error={revoke.error} />
        </>
      ) : null}
    </Dialog>
  );
}
