import { createContext, useContext, useSyncExternalStore, type ReactNode } from 'react';
import type { LiveStream, StreamSnapshot } from './live-stream';

const Ctx = createContext<LiveStream | null>(null);

export function LiveStreamProvider({ stream, children }: { stream: LiveStream; children: ReactNode }) {
  return <Ctx.Provider value={stream}>{children}</Ctx.Provider>;
}

export function useLiveStream(): LiveStream {
  const s = useContext(Ctx);
  if (!s) throw new Error('useLive outside LiveStreamProvider');
  return s;
}

/** The stream's status and its newest events (newest first); re-renders on every batch. */
export function useLive(): StreamSnapshot {
  const s = useLiveStream();
  return useSyncExternalStore(s.subscribe, s.getSnapshot);
}
