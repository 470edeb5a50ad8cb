import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { MintAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { pairingKey } from './get-pairing';

export type MintInput = { ttl_seconds?: number; grants?: Record<string, number | false>; transport_hint?: string };

export type Minted = MintAnswer & {
  /** Browser-side: what the operator chose, for the summary next to the QR. */
  terms: MintInput;
};

/** Kept in the query cache (not component state) so the QR survives a visit to another page. */
export const mintedKey = ['pairing-minted'] as const;

export const mintCode = async (input: MintInput): Promise<Minted> => ({
  ...(await apiPost<MintAnswer>('/pairing/mint', input)),
  terms: input,
});

export const useMintCode = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: mintCode,
    onSuccess: (minted) => {
      qc.setQueryData(mintedKey, minted);
      void qc.invalidateQueries({ queryKey: pairingKey });
    },
  });
};

export const useMinted = () =>
  useQuery<Minted | null>({ queryKey: mintedKey, queryFn: () => null, enabled: false, staleTime: Infinity, gcTime: Infinity });

export const useClearMinted = () => {
  const qc = useQueryClient();
  return () => qc.setQueryData(mintedKey, null);
};
