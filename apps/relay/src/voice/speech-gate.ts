/** Why a caller did not get a slot: every slot and queue place was taken, or its wait ran out. */
export class SpeechGateBusy extends Error {}

/** The caller went away while it waited for a slot. */
export class SpeechAborted extends Error {
  constructor() {
    super('the request was aborted');
  }
}

type Waiter = { grant: () => void };

/**
 * At most `maxRunning` speech jobs at once, at most `maxQueued` more waiting (first come, first served);
 * past that a caller is refused at once, never buffered. A waiter leaves the queue when its signal aborts
 * or its wait bound passes. `acquire` resolves with the release function (calling it twice is harmless).
 */
export class SpeechGate {
  private running = 0;
  private readonly queue: Waiter[] = [];

  constructor(
    readonly maxRunning: number,
    readonly maxQueued: number,
  ) {}

  get active(): number {
    return this.running;
  }

  get waiting(): number {
    return this.queue.length;
  }

  acquire(opts: { signal?: AbortSignal; waitMs: number }): Promise<() => void> {
    if (opts.signal?.aborted) return Promise.reject(new SpeechAborted());
    if (this.running < this.maxRunning) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    if (this.queue.length >= this.maxQueued) return Promise.reject(new SpeechGateBusy(`${this.running} running, ${this.queue.length} waiting`));
    return new Promise((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
      };
      const waiter: Waiter = {
        grant: () => {
          leave();
          this.running++;
          resolve(this.releaser());
        },
      };
      const onAbort = () => {
        leave();
        reject(new SpeechAborted());
      };
      const timer = setTimeout(() => {
        leave();
        reject(new SpeechGateBusy(`no slot within ${opts.waitMs} ms`));
      }, opts.waitMs);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.queue[0]?.grant();
    };
  }
}
