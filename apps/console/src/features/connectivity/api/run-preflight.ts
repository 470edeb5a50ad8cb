import { useMutation } from '@tanstack/react-query';
import type { PreflightAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';

export type PreflightInput = { host: string; port?: number };

export const runPreflight = (input: PreflightInput) => apiPost<PreflightAnswer>('/connectivity/preflight', input);

/** Read-only: it changes nothing on the relay, so nothing to invalidate. */
export const useRunPreflight = () => useMutation({ mutationFn: runPreflight });
