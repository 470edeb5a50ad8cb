import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ForgetAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { personalDataKey } from './get-personal-data';

/** What to forget: one device's content (its token prefix, or `host`), or every hour that began before a time (ISO). */
export type ForgetTarget = { device: string; before?: undefined } | { before: string; device?: undefined };

export const forgetPersonalData = (target: ForgetTarget, dryRun = false) =>
  apiPost<ForgetAnswer>('/personal-data/forget', { ...target, ...(dryRun ? { dry_run: true } : {}) });

/** The dry run: how many keys forgetting `target` would destroy now (nothing is recorded). */
export const forgetPreviewQueryOptions = (target: ForgetTarget) =>
  queryOptions({
    queryKey: [...personalDataKey, 'dry-run', target.device ?? null, target.before ?? null],
    queryFn: () => forgetPersonalData(target, true),
    staleTime: 0,
    gcTime: 0,
  });

export const useForgetPreview = (target: ForgetTarget | null) =>
  useQuery({ ...forgetPreviewQueryOptions(target ?? { device: '' }), enabled: target !== null });

export const useForgetPersonalData = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (target: ForgetTarget) => forgetPersonalData(target),
    onSettled: () => qc.invalidateQueries({ queryKey: personalDataKey }),
  });
};
