import { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { mayQueue } from '../common/sockets/socket-guard';
import { encodeHostFrame, FLAG_CLOSE, FLAG_DATA, HEADER_SIZE, MAX_FRAME } from './protocol';

/** The most a host-to-broker frame gathers before it goes (a download streams in frames of this size). */
const BATCH_BYTES = 256 * 1024;
/** How often a stream held by back-pressure looks whether the broker socket drained (as voice audio does). */
const DRAIN_POLL_MS = 10;

/** One stream the broker opened on the relay's socket: the phone's bytes as a Duplex the Secure Link origin runs TLS over. */
export type HostStream = {
  readonly id: string;
  readonly duplex: Duplex;
  /** The route credential the broker matched it with; null for a bootstrap credential or a broker that does not say. */
  readonly routeId: string | null;
  /** Resolves once the relay's side ended (everything it wrote went to the broker, then its close) or the stream was destroyed. */
  readonly ended: Promise<void>;
  /** Sends what is gathered now, ahead of whatever the connector sends next on the broker socket. */
  flush(): void;
  /** The broker closed it: no close frame goes back. */
  markBrokerClosed(): void;
};

/**
 * A stream's relay side. TLS hands over one record (<= 16 KiB) per turn of the event loop (Node's JS stream
 * socket completes each write on setImmediate): a frame per record made a 1 MiB download through the broker
 * 5.7x slower than direct (docs/BENCHMARKS.md, Secure Link and Reach). Records are gathered while TLS keeps
 * writing, and sent as one frame once a turn passes without a new one (or BATCH_BYTES gathered).
 *
 * Back-pressure: while the broker socket holds half of `bufferBytes` unsent, a stream's write completes only
 * once it drained to a quarter, so TLS (and the phone socket inside it, which the guard bounds) holds the rest.
 */
export function openHostStream(
  ws: WebSocket,
  id: string,
  routeId: string | null,
  bufferBytes: number,
  onDestroy: (s: HostStream) => void,
): HostStream {
  // The broker closed it (no close frame goes back), or the relay sent its close already.
  let closeSent = false;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let writes = 0;
  let seen = -1;
  let scheduled = false;
  let end: () => void = () => undefined;
  const ended = new Promise<void>((r) => (end = r));
  const flush = () => {
    scheduled = false;
    const chunks = pending;
    pending = [];
    pendingBytes = 0;
    if (chunks.length === 0 || ws.readyState !== ws.OPEN) return;
    const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    for (let i = 0; i < all.length && mayQueue(ws); i += MAX_FRAME - HEADER_SIZE)
      ws.send(encodeHostFrame(FLAG_DATA, id, all.subarray(i, i + MAX_FRAME - HEADER_SIZE)), { binary: true });
  };
  const sendClose = () => {
    if (!closeSent && ws.readyState === ws.OPEN && mayQueue(ws)) ws.send(encodeHostFrame(FLAG_CLOSE, id), { binary: true });
    closeSent = true;
  };
  const high = bufferBytes / 2;
  const drained = (cb: () => void) => {
    if (ws.readyState !== ws.OPEN || ws.bufferedAmount + pendingBytes <= high / 2) return cb();
    setTimeout(drained, DRAIN_POLL_MS, cb).unref();
  };
  // Runs before the turn's write completion (it was scheduled first), so it looks one turn back.
  const check = () => {
    if (!scheduled) return;
    if (writes !== seen) {
      seen = writes;
      setImmediate(check);
    } else flush();
  };
  let destroyed = false;
  const duplex = new Duplex({
    read() {},
    write: (chunk: Buffer, _enc, cb) => {
      pending.push(chunk);
      pendingBytes += chunk.length;
      writes++;
      if (pendingBytes >= BATCH_BYTES) flush();
      else if (!scheduled) {
        scheduled = true;
        seen = -1;
        setImmediate(check);
      }
      if (ws.bufferedAmount + pendingBytes > high) drained(cb);
      else cb();
    },
    final: (cb) => {
      flush();
      sendClose();
      end();
      cb();
    },
    destroy: (err, cb) => {
      flush();
      if (!destroyed) {
        destroyed = true;
        sendClose();
        onDestroy(stream);
      }
      end();
      cb(err);
    },
  });
  const stream: HostStream = { id, duplex, routeId, ended, flush, markBrokerClosed: () => (closeSent = true) };
  return stream;
}
