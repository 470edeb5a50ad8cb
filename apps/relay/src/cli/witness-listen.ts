import type { Verifier } from '@svc/events/merkle/note';
import * as path from 'node:path';
import type { WitnessHome } from '../transparency/witness-run';
import { claimHome, releaseHome, serveWitness, type PushOutcome, type SerialLock } from '../transparency/witness-serve';
import { CliError, colours, line, type CliIo } from './io';

/** `--listen HOST:PORT` (port 0: any free port); an IPv6 host in brackets, `[::1]:8780`. */
export function parseListen(text: string): { host: string; port: number } | null {
  const colon = text.lastIndexOf(':');
  if (colon <= 0 || text.length > 300) return null;
  let host = text.slice(0, colon);
  const portText = text.slice(colon + 1);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.length === 0 || /[\s/[\]]/.test(host) || !/^\d{1,5}$/.test(portText) || Number(portText) > 65_535) return null;
  return { host, port: Number(portText) };
}

export type Serving = { stopped: Promise<{ refused: boolean }> };

/**
 * `svc relay witness --listen`: serves C2SP tlog-witness add-checkpoint until io.signal aborts (SIGTERM,
 * SIGINT). Prints `listening on URL` on stdout first; each cosignature a line on stdout, each refusal a
 * `WITNESS REFUSED` line on stderr (once per checkpoint and kind). `stopped` says whether it refused any.
 */
export async function listen(
  home: WitnessHome,
  log: Verifier,
  at: { host: string; port: number },
  lock: SerialLock,
  io: CliIo,
  json: boolean,
): Promise<Serving> {
  const holder = claimHome(home);
  if (holder !== null)
    throw new CliError(`this witness home is already served by process ${holder} (${path.join(home.dir, 'serve.pid')}); one process serves a home`);
  let refused = false;
  const say = (o: PushOutcome) => {
    if (!o.ok) refused = true;
    if (json) line(io.stdout, JSON.stringify(o));
    // A tree cosigned again (the same size) is not news: a log's retries and replays would fill the journal.
    if (o.ok && !json && o.cosigned.size !== o.previous?.size) {
      const from = o.previous ? `consistent with ${o.previous.size} cosigned before` : 'first checkpoint seen';
      line(io.stdout, `${colours(io.stdout, io.env).green('cosigned')}  ${o.cosigned.origin} tree size ${o.cosigned.size} (${o.from}; ${from})`);
    }
    if (!o.ok)
      line(
        io.stderr,
        `${colours(io.stderr, io.env).red('WITNESS REFUSED')}  ${o.from}: ${o.reason} (${o.code}; recorded in ${path.join(home.dir, 'refusals.jsonl')})`,
      );
  };
  let server;
  try {
    server = await serveWitness({ home, log, ...at, lock, now: () => Math.floor(Date.now() / 1000), onOutcome: say });
  } catch (err) {
    releaseHome(home);
    throw new CliError(`--listen ${at.host}:${at.port}: ${(err as Error).message}`);
  }
  line(io.stdout, `listening on ${server.url}`);
  const stopped = new Promise<{ refused: boolean }>((resolve) => {
    const stop = () =>
      void server.close().then(() => {
        releaseHome(home);
        resolve({ refused });
      });
    if (!io.signal) return; // nothing can stop it: serves for the life of the process
    if (io.signal.aborted) stop();
    else io.signal.addEventListener('abort', stop, { once: true });
  });
  return { stopped };
}
