import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { SelectActiveAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { bridgeKey } from './get-bridge';

export const selectActive = (device: string) => apiPost<SelectActiveAnswer>('/bridge/select-active', { device });

export const useSelectActive = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: selectActive, onSettled: () => qc.invalidateQueries({ queryKey: bridgeKey }) });
};
