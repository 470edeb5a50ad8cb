import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import type { StoredRelayEvent } from '@svc/events';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { toConsoleEvent } from './console-redaction';
import { ConsoleState } from './console-state.service';

/** A client this far behind (bytes queued in its socket) is cut; it resumes from its Last-Event-ID. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const REPLAY_PAGE = 500;

type Client = { res: ServerResponse; close: () => void };

/**
 * One serialisation per event, however many consoles watch: the bus hands every subscriber the same
 * object, so a WeakMap keyed by it shares the redacted SSE frame.
 */
const frames = new WeakMap<StoredRelayEvent, string>();
function frameOf(e: StoredRelayEvent): string {
  let f = frames.get(e);
  if (f === undefined) {
    f = `id: ${e.seq}\ndata: ${JSON.stringify(toConsoleEvent(e))}\n\n`;
    frames.set(e, f);
  }
  return f;
}

function waitDrainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * The console's live stream (SSE). Subscribes to the bus first and queues what arrives, replays stored
 * events after the client's seq up to what is durable, then drains the queue skipping anything already
 * sent: nothing missed, nothing doubled. Every message's `id` is its seq, so the browser's automatic
 * reconnect sends `Last-Event-ID` and resumes where it stopped.
 */
@Injectable()
export class ConsoleStream implements BeforeApplicationShutdown {
  private readonly clients = new Set<Client>();
  /** Set once shutdown begins: a stream opened after that would keep the HTTP server from closing. */
  private closing = false;

  constructor(
    private readonly loop: CommandLoop,
    private readonly state: ConsoleState,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  count(): number {
    return this.clients.size;
  }

  /** `from`: the last seq the client holds (null: start live, from now). */
  async open(res: ServerResponse, from: number | null): Promise<void> {
    if (this.closing) {
      res.writeHead(503, { 'content-type': 'application/json', 'cache-control': 'no-store', connection: 'close' });
      res.end(JSON.stringify({ ok: false, error: 'the relay is stopping', code: 'unavailable' }));
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    const head = this.loop.lastSeq;
    const reset = from !== null && from > head;
    let lastSent = from === null || reset ? head : from;
    let replaying = true;
    let closed = false;
    const queue: StoredRelayEvent[] = [];

    let corked = false;
    const write = (chunk: string): boolean => {
      if (closed) return false;
      // A group commit publishes its events in one synchronous loop: send them as one write.
      if (!corked) {
        corked = true;
        res.cork();
        process.nextTick(() => {
          corked = false;
          res.uncork();
        });
      }
      const ok = res.write(chunk);
      if (res.writableLength > MAX_BUFFERED_BYTES) {
        this.logger.warn({ buffered: res.writableLength }, 'console stream client too slow; closing it (it will resume from its last seq)');
        client.close();
      }
      return ok;
    };
    const send = (e: StoredRelayEvent): boolean => {
      if (e.seq <= lastSent) return true;
      lastSent = e.seq;
      return write(frameOf(e));
    };

    const sub = this.loop.bus.events$.subscribe((e) => (replaying ? queue.push(e) : send(e)));
    const heartbeat = setInterval(() => write(`: hb ${Date.now()}\n\n`), this.config.consoleHeartbeatMs);
    heartbeat.unref();
    const client: Client = {
      res,
      close: () => {
        if (closed) return;
        closed = true;
        sub.unsubscribe();
        clearInterval(heartbeat);
        this.clients.delete(client);
        res.end();
      },
    };
    this.clients.add(client);
    res.on('close', () => client.close());

    write(`retry: 2000\nevent: hello\ndata: ${JSON.stringify({ last_seq: head, from: lastSent, reset })}\n\n`);
    try {
      // Replay what is durable now; anything newer is already queued from the bus.
      while (!closed && lastSent < head) {
        const page = await this.state.after(lastSent, REPLAY_PAGE);
        if (page.events.length === 0) break;
        const before = lastSent;
        let flowing = true;
        for (const e of page.events) if (e.seq <= head) flowing = send(e) && flowing;
        if (lastSent === before) break;
        if (!flowing && !closed) await waitDrainOrClose(res);
        if (!page.more) break;
      }
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'console stream replay failed');
      client.close();
      return;
    }
    replaying = false;
    for (const e of queue.splice(0)) send(e);
  }

  beforeApplicationShutdown(): void {
    this.closing = true;
    for (const c of [...this.clients]) c.close();
  }
}
