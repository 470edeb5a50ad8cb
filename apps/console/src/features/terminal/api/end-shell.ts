import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { EndShellAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { terminalKey } from './get-terminal';

/** Ends a shell: its processes are hung up, its end is recorded by the operator and its phone told. */
export const endShell = (shellId: string) => apiPost<EndShellAnswer>(`/terminal/shells/${encodeURIComponent(shellId)}/end`);

export const useEndShell = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: endShell, onSettled: () => qc.invalidateQueries({ queryKey: terminalKey }) });
};
