import type { Verifier } from '@svc/events/merkle/note';
import { createFileExclusive } from '@svc/events';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { addCheckpoint, AddCheckpointError, parseAddCheckpoint, StaleOldSize, type Cosigned } from './witness-add-checkpoint';
import { recordRefusal, type RefusalCode, type Seen, type WitnessHome } from './witness-run';

/**
 * The witness as a C2SP tlog-witness server (`svc relay witness --listen`): POST /add-checkpoint on a
 * plain node:http server, for any peer (the spec has no authentication beyond the log's signature on the
 * checkpoint), so every peer is treated as hostile: the body is bounded before it is read, requests and
 * headers time out, connections are capped, and updates of the kept tree run one at a time.
 */

/** A request is an old-size line, at most 63 hashes and a checkpoint note (at most 16 KiB): 64 KiB is ample. */
export const MAX_BODY_BYTES = 64 * 1024;
export const ADD_CHECKPOINT_PATH = '/add-checkpoint';

/** Runs tasks one after another: check-and-update of state.json stays atomic across requests (and pull rounds). */
export class SerialLock {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

export type PushOutcome =
  ({ ok: true; from: string } & Omit<Cosigned, 'line'>) | { ok: false; from: string; code: RefusalCode; reason: string; checkpoint: Seen };

export type ServeOptions = {
  home: WitnessHome;
  log: Verifier;
  host: string;
  port: number;
  lock: SerialLock;
  /** Unix seconds, the cosignature's time. */
  now: () => number;
  /** A cosignature given, or a refusal recorded (said once per checkpoint and kind). */
  onOutcome: (o: PushOutcome) => void;
};

export type WitnessServer = { url: string; close: () => Promise<void> };

/** Distinct refusals kept in memory, so a peer replaying one public checkpoint with bad proofs adds one line, not a line a request. */
const REMEMBERED_REFUSALS = 256;

export async function serveWitness(o: ServeOptions): Promise<WitnessServer> {
  const refusedBefore = new Set<string>();
  // connectionsCheckingInterval: how often the two timeouts are enforced (Node's default, 30 s, nearly doubles them).
  const limits = {
    requestTimeout: 30_000,
    headersTimeout: 10_000,
    keepAliveTimeout: 5_000,
    maxHeaderSize: 8 * 1024,
    connectionsCheckingInterval: 2_000,
  };
  const server = http.createServer(limits, (req, res) => {
    void handle(req, res).catch(() => {
      // Disk full or a file the witness cannot write: the tree was not kept, so nothing was cosigned.
      if (!res.headersSent) send(res, 503, 'witness.unavailable', 'the witness could not keep its state; try again later');
      else res.destroy();
    });
  });
  server.maxConnections = 256;

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    // A body sent to the wrong place is not read: the connection closes after the answer rather than drain it.
    if ((q < 0 ? url : url.slice(0, q)) !== ADD_CHECKPOINT_PATH) {
      res.setHeader('Connection', 'close');
      return send(res, 404, 'witness.not_found', `this witness serves POST ${ADD_CHECKPOINT_PATH} only`);
    }
    if (req.method !== 'POST') {
      res.setHeader('Connection', 'close');
      res.setHeader('Allow', 'POST');
      return send(res, 405, 'witness.method_not_allowed', `${ADD_CHECKPOINT_PATH} takes POST only`);
    }
    const body = await readBody(req, res);
    if (!body) return;
    const from = `add-checkpoint from ${req.socket.remoteAddress ?? '?'}`;
    try {
      const request = parseAddCheckpoint(body);
      const done = await o.lock.run(() => addCheckpoint(o.home, o.log, request, o.now()));
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(done.line);
      o.onOutcome({ ok: true, from, cosigned: done.cosigned, previous: done.previous });
    } catch (err) {
      if (err instanceof StaleOldSize) {
        res.writeHead(409, { 'Content-Type': 'text/x.tlog.size', 'Cache-Control': 'no-store' });
        return void res.end(`${err.latest}\n`);
      }
      if (!(err instanceof AddCheckpointError)) throw err;
      if (err.refused) refused(from, err.refused.code, err.message, err.refused.checkpoint);
      send(res, err.status, err.code, err.message);
    }
  }

  function refused(from: string, code: RefusalCode, reason: string, cp: Seen): void {
    const key = `${code} ${cp.size} ${cp.root}`;
    if (refusedBefore.has(key)) return;
    if (refusedBefore.size >= REMEMBERED_REFUSALS) refusedBefore.delete(refusedBefore.values().next().value!);
    refusedBefore.add(key);
    recordRefusal(o.home, from, cp, code, reason, cp.time);
    o.onOutcome({ ok: false, from, code, reason, checkpoint: cp });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  return {
    url: `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        // Requests in flight finish (their state is kept before the answer); idle keep-alive sockets go now.
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/** The body, or null after answering 413 (a peer announcing or sending more than MAX_BODY_BYTES) or on a dropped request. */
function readBody(req: http.IncomingMessage, res: http.ServerResponse): Promise<Buffer | null> {
  const tooLarge = () => {
    res.setHeader('Connection', 'close');
    send(res, 413, 'witness.too_large', `a request body is at most ${MAX_BODY_BYTES} bytes`);
  };
  const announced = Number(req.headers['content-length'] ?? 0);
  if (announced > MAX_BODY_BYTES) {
    tooLarge();
    return Promise.resolve(null);
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.pause();
        tooLarge();
        resolve(null);
      } else chunks.push(c);
    });
    req.on('end', () => resolve(bytes > MAX_BODY_BYTES ? null : Buffer.concat(chunks)));
    req.on('error', () => resolve(null));
    req.on('close', () => resolve(null)); // after 'end' this is a no-op: the promise is settled
  });
}

function send(res: http.ServerResponse, status: number, code: string, error: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify({ ok: false, error, code }));
}

/**
 * One serving process per home: it alone updates state.json, so a pull round elsewhere cannot interleave
 * with a request's check-and-update. Returns the pid that holds the home, or null once it is ours.
 */
export function claimHome(home: WitnessHome): number | null {
  const file = path.join(home.dir, 'serve.pid');
  for (let tries = 0; tries < 3; tries++) {
    if (createFileExclusive(file, `${process.pid}\n`)) return null;
    const holder = servedBy(home);
    if (holder !== null) return holder;
    fs.rmSync(file, { force: true }); // left by a process that is gone
  }
  return servedBy(home) ?? -1;
}

export function releaseHome(home: WitnessHome): void {
  if (servedBy(home) === process.pid) fs.rmSync(path.join(home.dir, 'serve.pid'), { force: true });
}

/** The live process serving this home (serve.pid), if any. */
export function servedBy(home: { dir: string }): number | null {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(home.dir, 'serve.pid'), 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}
