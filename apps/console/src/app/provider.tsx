import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { ApiError } from '@/lib/api-client';
import { typeMatcher } from '@svc/events/event-types-match';
import { LiveStreamProvider } from '@/lib/live-context';
import { LiveStream } from '@/lib/live-stream';
import { FEATURES } from './features';

function makeClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // A 4xx will not fix itself; the network or a restarting relay might.
        retry: (n, err) => !(err instanceof ApiError && err.status >= 400 && err.status < 500) && n < 2,
        refetchOnWindowFocus: true,
        staleTime: 5_000,
      },
    },
  });
}

/** Each feature's invalidation rules, their event patterns read once (libs/events/src/event-types-match.ts). */
const INVALIDATIONS = FEATURES.flatMap((f) => f.invalidate.map((rule) => ({ matches: typeMatcher(rule.on), queryKey: rule.queryKey })));

/**
 * Query cache + the one live stream. Each event invalidates the queries of the features that listen
 * for its type; invalidations are batched (one refetch per key per 200 ms at most).
 */
export function AppProvider({ children }: { children: ReactNode }) {
  const [client] = useState(makeClient);
  const [stream] = useState(() => new LiveStream());

  useEffect(() => {
    const dirty = new Map<string, readonly unknown[]>();
    let timer: ReturnType<typeof setTimeout> | null = null;
    const off = stream.onEvents((events) => {
      for (const rule of INVALIDATIONS) {
        if (events.some((e) => rule.matches(e.type))) dirty.set(JSON.stringify(rule.queryKey), rule.queryKey);
      }
      if (dirty.size && !timer) {
        timer = setTimeout(() => {
          timer = null;
          for (const key of dirty.values()) void client.invalidateQueries({ queryKey: key });
          dirty.clear();
        }, 200);
      }
    });
    void stream.start();
    return () => {
      off();
      stream.stop();
      if (timer) clearTimeout(timer);
    };
  }, [client, stream]);

  return (
    <QueryClientProvider client={client}>
      <LiveStreamProvider stream={stream}>{children}</LiveStreamProvider>
    </QueryClientProvider>
  );
}
