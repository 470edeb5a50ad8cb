import type { Logger } from 'pino';
import type { RawData, WebSocket } from 'ws';

/**
 * The bounds every WebSocket the relay holds keeps, both ways (issue 34; docs/PROTOCOL.md "Sockets"): phone
 * and desktop sockets (`/ws`), voice sockets, the Reach connector's socket to its broker and the broker's
 * own. What a peer can make the relay hold for it is bounded, whatever it sends and however slowly it reads.
 */
export type SocketLimits = {
  /**
   * Output: unsent bytes (`bufferedAmount`) past which the next frame closes the socket instead (1013
   * `slow_consumer`). Input: bytes read but not yet handled at which reading pauses.
   */
  bufferBytes: number;
  /** Frames read but not yet handled at which reading pauses (it resumes at half, and at half the bytes). */
  queuedFrames: number;
  /** Frames a second a peer may send on average: past it each frame waits its turn (nothing is dropped). */
  framesPerSecond: number;
  /** Frames a peer may send at once before the rate applies. */
  frameBurst: number;
  /** A protocol ping each interval; a socket that has not answered by the next one is closed (1008 `ping_timeout`). */
  pingIntervalMs: number;
};

/** Why the guard closed a socket, with the code it sent: what the owner records. */
export type SocketCut = { readonly code: number; readonly reason: 'slow_consumer' | 'ping_timeout' };

/** RFC 6455 "Try Again Later": the peer may well be on a slow network; the app reconnects on any close. */
export const SLOW_CONSUMER: SocketCut = { code: 1013, reason: 'slow_consumer' };
export const PING_TIMEOUT: SocketCut = { code: 1008, reason: 'ping_timeout' };

export type GuardHooks = {
  /** Hears a close the guard makes, before the socket closes (the phone hub records its code and reason). */
  onCut?: (cut: SocketCut) => void;
  /** Fields for the log line of a cut (never a secret). */
  describe?: () => Record<string, unknown>;
};

const GUARD = Symbol('svc.socketGuard');
type Guarded = WebSocket & { [GUARD]?: SocketGuard };

/** The guard of a socket, if it has one. */
export const guardOf = (ws: WebSocket): SocketGuard | undefined => (ws as Guarded)[GUARD];

/**
 * Whether one more frame may be queued on `ws`; false when the socket was just closed as a slow consumer
 * (the frame is then not sent). A socket without a guard always may.
 */
export function mayQueue(ws: WebSocket): boolean {
  const g = (ws as Guarded)[GUARD];
  return g === undefined || g.mayQueue();
}

/** A frame's size as ws hands it over (a Buffer unless binaryType was changed). */
export function rawSize(data: RawData): number {
  return Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data instanceof ArrayBuffer ? data.byteLength : data.length;
}

// One set of listeners for every guarded socket (they find their guard on the socket), not closures per socket.
const onPong = function (this: WebSocket): void {
  const g = (this as Guarded)[GUARD];
  if (g) g.awaitingPong = false;
};
const onClose = function (this: WebSocket): void {
  const g = (this as Guarded)[GUARD];
  if (g) g.owner.forget(g);
};

const waitUntil = (at: number) =>
  new Promise<void>((resolve) => {
    // Unref'd: a closed flooder's paced frames must not hold the process open.
    setTimeout(resolve, Math.max(0, at - performance.now())).unref();
  });

/** One socket's bounds: its output checked before each frame, its input queued and paced, its pings answered. */
export class SocketGuard {
  /** The close the guard made, if it made one. */
  cut: SocketCut | null = null;
  /** A ping is out and its pong has not come back. */
  awaitingPong = false;
  private depth = 0;
  private bytes = 0;
  private tokens: number;
  private lookedAt = performance.now();
  private paused = false;
  private paced = false;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    readonly ws: WebSocket,
    readonly owner: SocketGuards,
    private readonly hooks: GuardHooks,
  ) {
    this.tokens = owner.limits.frameBurst;
  }

  /** Before a frame is queued: past the bound the socket is closed 1013 `slow_consumer` and the frame not sent. */
  mayQueue(): boolean {
    if (this.cut === null && this.ws.bufferedAmount <= this.owner.limits.bufferBytes) return true;
    this.close(SLOW_CONSUMER);
    return false;
  }

  /**
   * A frame read: `handle` runs after every earlier frame's (they are handled in arrival order), no sooner
   * than the rate allows. Reading pauses while the queue is deep, so a flood waits in the peer's buffers,
   * not in the relay. `handle` must not throw (a throw is logged). Cost per frame: two counters and three
   * comparisons; the clock is read only once the burst is spent.
   */
  run(size: number, handle: () => unknown): void {
    const limits = this.owner.limits;
    this.depth++;
    this.bytes += size;
    const due = --this.tokens < 0 ? this.overRate() : 0;
    if (!this.paused && (this.depth >= limits.queuedFrames || this.bytes >= limits.bufferBytes)) {
      this.paused = true;
      this.ws.pause();
    }
    this.tail = this.tail.then(() => this.step(size, due, handle));
  }

  private async step(size: number, due: number, handle: () => unknown): Promise<void> {
    try {
      // A socket that closed meanwhile has its frames handed over at once (their handlers drop them).
      if (due > 0 && this.cut === null && this.ws.readyState === this.ws.OPEN) await waitUntil(due);
      if (this.cut === null) await handle();
    } catch (err) {
      this.owner.logger.error({ socket: this.owner.kind, err: (err as Error).message }, 'socket frame handler failed');
    } finally {
      this.depth--;
      this.bytes -= size;
      const limits = this.owner.limits;
      if (this.paused && this.depth <= limits.queuedFrames / 2 && this.bytes <= limits.bufferBytes / 2) {
        this.paused = false;
        this.ws.resume();
      }
    }
  }

  /** The frame that spent the bucket: the tokens earned since the last look (at most a burst), and when its turn is. */
  private overRate(): number {
    const { framesPerSecond: rate, frameBurst: burst } = this.owner.limits;
    const now = performance.now();
    // This frame has already taken its token: refill as if it had not, then take it again.
    this.tokens = Math.min(burst, this.tokens + 1 + ((now - this.lookedAt) * rate) / 1000) - 1;
    this.lookedAt = now;
    if (this.tokens >= 0) return 0;
    if (!this.paced) {
      this.paced = true;
      this.owner.logger.info({ socket: this.owner.kind, ...this.hooks.describe?.() }, 'socket paced: frames past the per-second cap wait their turn');
    }
    return now + (-this.tokens * 1000) / rate;
  }

  /** Closes the socket with `cut` at once (a peer that does not read would never see a closing handshake through). */
  close(cut: SocketCut): void {
    if (this.cut !== null || this.ws.readyState === this.ws.CLOSED) return;
    this.cut = cut;
    const buffered = this.ws.bufferedAmount;
    this.hooks.onCut?.(cut);
    this.owner.logger.warn(
      { socket: this.owner.kind, reason: cut.reason, code: cut.code, buffered_bytes: buffered, ...this.hooks.describe?.() },
      cut === SLOW_CONSUMER
        ? 'socket closed: slow_consumer (its unsent output passed the bound)'
        : 'socket closed: ping_timeout (no pong by the deadline)',
    );
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(cut.code, cut.reason);
    this.ws.terminate();
  }
}

/**
 * The guards of one kind of socket and their keepalive: one timer pings every open socket each interval;
 * a socket whose previous ping is still unanswered is closed instead. Frames the peer sends do not count:
 * a peer that talks but does not answer is as gone as one that went silent.
 */
export class SocketGuards {
  private readonly open = new Set<SocketGuard>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly limits: SocketLimits,
    readonly logger: Logger,
    /** Names the kind in log lines (`phone`, `voice`, `reach`). */
    readonly kind: string,
  ) {}

  /** Guards `ws` from now until it closes. */
  watch(ws: WebSocket, hooks: GuardHooks = {}): SocketGuard {
    const g = new SocketGuard(ws, this, hooks);
    (ws as Guarded)[GUARD] = g;
    this.open.add(g);
    ws.on('pong', onPong);
    ws.once('close', onClose);
    if (this.timer === null) {
      this.timer = setInterval(() => this.tick(), this.limits.pingIntervalMs);
      this.timer.unref();
    }
    return g;
  }

  forget(g: SocketGuard): void {
    this.open.delete(g);
  }

  get size(): number {
    return this.open.size;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Each interval: a socket whose pong has not come back is closed, the others pinged. The verdict waits
   * one turn of the event loop (setImmediate runs after the poll phase): a relay whose loop stalled past
   * the interval reads the pongs already waiting in its sockets before it judges, and so does not drop
   * live phones for its own delay.
   */
  private tick(): void {
    const silent: SocketGuard[] = [];
    for (const g of this.open) {
      if (g.ws.readyState !== g.ws.OPEN) continue;
      if (g.awaitingPong) {
        silent.push(g);
        continue;
      }
      g.awaitingPong = true;
      g.ws.ping();
    }
    if (silent.length > 0)
      setImmediate(() => {
        for (const g of silent) if (g.awaitingPong && g.ws.readyState === g.ws.OPEN) g.close(PING_TIMEOUT);
      });
  }
}
