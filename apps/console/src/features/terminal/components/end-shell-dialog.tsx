import type { ShellRow } from '@svc/console-api';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { useEndShell } from '../api/end-shell';

export function EndShellDialog({ shell, onClose }: { shell: ShellRow | null; onClose: () => void }) {
  const end = useEndShell();
  return (
    <ConfirmDialog
      item={shell}
      title="End this shell?"
      action="End shell"
      testId="confirm-end-shell"
      mutation={end}
      keyOf={(s) => s.shell_id}
      onClose={onClose}
    >
      {(s) => (
        <p>
          Shell <strong>{s.session_name}</strong> of <span className="mono">{s.token_prefix}</span> ({s.shell}, pid {s.pid}) and every process started
          in it are hung up now. {s.attached ? 'The phone showing it is told the shell was ended.' : ''} Anything unsaved in it is lost.
        </p>
      )}
    </ConfirmDialog>
  );
}
