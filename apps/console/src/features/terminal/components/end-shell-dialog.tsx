import type { ShellRow } from '@svc/console-api';
import { Button, Dialog, InlineError } from '@/components/ui';
import { useEndShell } from '../api/end-shell';

export function EndShellDialog({ shell, onClose }: { shell: ShellRow | null; onClose: () => void }) {
  const end = useEndShell();
  const close = () => {
    end.reset();
    onClose();
  };
  return (
    <Dialog
      open={shell !== null}
      title="End this shell?"
      onClose={close}
      footer={
        <>
          <Button onClick={close}>Cancel</Button>
          <Button
            variant="danger"
            busy={end.isPending}
            onClick={() => shell && end.mutate(shell.shell_id, { onSuccess: close })}
            data-testid="confirm-end-shell"
          >
            End shell
          </Button>
        </>
      }
    >
      {shell ? (
        <>
          <p>
            Shell <strong>{shell.session_name}</strong> of <span className="mono">{shell.token_prefix}</span> ({shell.shell}, pid {shell.pid}) and
            every process started in it are hung up now. {shell.attached ? 'The phone showing it is told the shell was ended.' : ''} Anything unsaved
            in it is lost.
          </p>
          <InlineError error={end.error} />
        </>
      ) : null}
    </Dialog>
  );
}
