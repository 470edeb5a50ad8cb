import type { ReactNode } from 'react';
import { Button, Dialog, InlineError } from '@/components/ui';

/** What a confirm dialog needs of a react-query mutation keyed by one string (a prefix, a shell id...). */
type KeyedMutation = {
  mutate: (key: string, options: { onSuccess: () => void }) => void;
  reset: () => void;
  isPending: boolean;
  error: unknown;
};

/**
 * "Do this dangerous thing to `item`?": open while `item` is set, Cancel or the danger button, the
 * mutation's error inline; a success closes it. One shape for End shell, End renewal and their kin.
 */
export function ConfirmDialog<T>({
  item,
  title,
  action,
  testId,
  mutation,
  keyOf,
  children,
  onClose,
  disabled = false,
}: {
  item: T | null;
  title: string;
  action: string;
  testId: string;
  mutation: KeyedMutation;
  keyOf: (item: T) => string;
  children: (item: T) => ReactNode;
  onClose: () => void;
  /** The action cannot be taken yet (what it would do is still being asked, or it would do nothing). */
  disabled?: boolean;
}) {
  const close = () => {
    mutation.reset();
    onClose();
  };
  return (
    <Dialog
      open={item !== null}
      title={title}
      onClose={close}
      footer={
        <>
          <Button onClick={close}>Cancel</Button>
          <Button
            variant="danger"
            busy={mutation.isPending}
            disabled={disabled}
            onClick={() => item !== null && mutation.mutate(keyOf(item), { onSuccess: close })}
            data-testid={testId}
          >
            {action}
          </Button>
        </>
      }
    >
      {item !== null ? (
        <>
          {children(item)}
          <InlineError error={mutation.error} />
        </>
      ) : null}
    </Dialog>
  );
}
