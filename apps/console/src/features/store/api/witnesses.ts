import { useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';

/** `GET /console/api/store/witnesses`, as `GET /log/witnesses` (docs/PROTOCOL.md, "Transparency log"). */
export type WitnessesView = {
  ok: true;
  configured: string[];
  witnesses: Array<{
    name: string;
    key_hash: string;
    cosigned: { size: number; root: string; time: number; received_at: number } | null;
    refusal: { size: number; root: string; reason: string; time: number; received_at: number } | null;
    /** What the witness answered when the relay last submitted a checkpoint (RELAY_WITNESS_URLS: C2SP tlog-witness); null when it does not submit there. */
    push: {
      url: string;
      state: 'pending' | 'ok' | 'error' | 'refused';
      at: number | null;
      message: string | null;
      next_at: number | null;
      failures: number;
    } | null;
  }>;
};

export const witnessesKey = ['store', 'witnesses'] as const;

const getWitnesses = ({ signal }: { signal?: AbortSignal }) => apiGet<WitnessesView>('/store/witnesses', signal);

export const useWitnesses = () => useQuery({ queryKey: witnessesKey, queryFn: getWitnesses });
