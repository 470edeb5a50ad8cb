import type { ConsoleEvent } from '@svc/console-api';
import { API_BASE, apiGet } from './api-client';

export type StreamStatus = 'connecting' | 'live' | 'down';

export type StreamSnapshot = {
  status: StreamStatus;
  /** When the stream last went down (ms, browser clock), for the banner's "for 12 s". */
  downSince: number | null;
  lastSeq: number | null;
  /** Newest first, at most `KEEP`. */
  events: ConsoleEvent[];
};

const KEEP = 500;
const MAX_BACKOFF_MS = 15_000;

type Listener = () => void;
type EventListener = (events: ConsoleEvent[]) => void;

/**
 * The console's one EventSource. Seeds itself with the newest stored events, then streams from the
 * last seq it holds; every message id is a seq, so the browser's own reconnect resumes with
 * `Last-Event-ID`, and when the browser gives up (relay restarted, 5xx) this reopens it with
 * `?after=<last seq>` and backoff. A seq already held is dropped: nothing doubled, nothing missed.
 */
export class LiveStream {
  private snap: StreamSnapshot = { status: 'connecting', downSince: null, lastSeq: null, events: [] };
  private readonly listeners = new Set<Listener>();
  private readonly eventListeners = new Set<EventListener>();
  private source: EventSource | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private backoff = 1000;
  private stopped = false;
  private pending: ConsoleEvent[] = [];
  private flushScheduled = false;

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  getSnapshot = (): StreamSnapshot => this.snap;

  /** Called with each batch of new events (after the snapshot updates). */
  onEvents(l: EventListener): () => void {
    this.eventListeners.add(l);
    return () => this.eventListeners.delete(l);
  }

  async start(): Promise<void> {
    this.stopped = false;
    try {
      const page = await apiGet<{ events: ConsoleEvent[]; last_seq: number }>('/events?limit=100');
      this.accept([...page.events].reverse());
      if (this.snap.lastSeq === null) this.set({ lastSeq: page.last_seq });
    } catch {
      // The stream itself reports the relay as down; it starts live and the log page pages back.
    }
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.source?.close();
    this.source = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  private open(): void {
    if (this.stopped) return;
    this.source?.close();
    const after = this.snap.lastSeq;
    const es = new EventSource(`${API_BASE}/stream${after !== null ? `?after=${after}` : ''}`);
    this.source = es;
    es.addEventListener('hello', (m) => {
      const hello = JSON.parse((m as MessageEvent<string>).data) as { last_seq: number; reset: boolean };
      if (hello.reset) this.set({ events: [], lastSeq: hello.last_seq });
      this.backoff = 1000;
      this.set({ status: 'live', downSince: null });
    });
    es.onmessage = (m: MessageEvent<string>) => {
      const e = JSON.parse(m.data) as ConsoleEvent;
      this.pending.push(e);
      // Batch a replay burst into one render.
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        queueMicrotask(() => {
          this.flushScheduled = false;
          this.accept(this.pending.splice(0));
        });
      }
    };
    es.onerror = () => {
      if (this.source !== es) return;
      this.set({ status: 'down', downSince: this.snap.downSince ?? Date.now() });
      if (es.readyState === EventSource.CLOSED) {
        this.retryTimer = setTimeout(() => this.open(), this.backoff);
        this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
      }
    };
  }

  /** Oldest first in; keeps only seqs newer than the last held. */
  private accept(batch: ConsoleEvent[]): void {
    let last = this.snap.lastSeq ?? 0;
    const fresh: ConsoleEvent[] = [];
    for (const e of batch) {
      if (e.seq <= last) continue;
      last = e.seq;
      fresh.push(e);
    }
    if (fresh.length === 0) return;
    this.set({ lastSeq: last, events: [...[...fresh].reverse(), ...this.snap.events].slice(0, KEEP) });
    for (const l of this.eventListeners) l(fresh);
  }

  private set(patch: Partial<StreamSnapshot>): void {
    this.snap = { ...this.snap, ...patch };
    for (const l of this.listeners) l();
  }
}
