import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { spawnSvc, startRelayProcess, type SvcProcess } from './dist';

export type RelayProcess = SvcProcess & { url: string };

/** What every relay of a pair runs with: the database, and short timings so a takeover is quick to see. */
export const pairEnv = (url: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  RELAY_EVENT_STORE: url,
  RELAY_LOG_LEVEL: 'WARNING',
  RELAY_STANDBY_POLL_MS: '100',
  // Long enough that a heartbeat starved by a loaded machine does not end a healthy leader's session.
  RELAY_LEADER_LEASE_MS: '4000',
  ...extra,
});

/** `svc relay standby init` on the second host's home, from the first's (what an operator runs once). */
export async function standbyInit(fromHome: string, toHome: string, url: string): Promise<{ code: number | null; out: string; err: string }> {
  const p = spawnSvc(['relay', 'standby', 'init', '--from', fromHome], { SVC_HOME: toHome, RELAY_EVENT_STORE: url });
  const { code } = await p.exited;
  return { code, out: p.stdout(), err: p.stderr() };
}

/** A standby on `home` (already prepared with `standbyInit`). */
export function startStandby(home: string, url: string, extra: NodeJS.ProcessEnv = {}): Promise<RelayProcess> {
  return startRelayProcess(home, pairEnv(url, { RELAY_ROLE: 'standby', ...extra }));
}

export type Health = { status: string; role?: { role: 'leader' | 'standby'; epoch: number | null; lag_records?: number; lag_ms?: number } };

export async function health(url: string): Promise<Health | null> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
    return res.status === 200 ? ((await res.json()) as Health) : null;
  } catch {
    return null;
  }
}

/** Polls until `check` holds (a condition, never a fixed delay); fails with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until the relay at `url` says it leads; resolves with when it first said so (Date.now()). */
export async function untilLeader(url: string, timeoutMs = 30_000): Promise<number> {
  await waitFor(`${url} to lead`, async () => (await health(url))?.role?.role === 'leader', timeoutMs);
  return Date.now();
}

/** Stops a relay process that may already be gone (or frozen: it is continued first). */
export async function stopRelay(p: SvcProcess | null | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGCONT');
  p.child.kill('SIGTERM');
  const t = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
  await p.exited;
  clearTimeout(t);
}

/** The files of a home's relay directory (to show what `standby init` wrote). */
export function relayFiles(home: string): string[] {
  const dir = path.join(home, 'relay');
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

/**
 * The one address phones and tools use (what a TCP load balancer with an HTTP health check does, e.g.
 * HAProxy `option httpchk GET /health` expecting `"role":"leader"`): every new connection goes to the
 * backend whose /health last said it leads; with none, the connection is closed at once (the client
 * retries). Connections already piped stay on their backend until it drops them.
 */
export async function leaderForwarder(
  backends: () => string[],
  checkMs = 100,
): Promise<{ url: string; leader: () => string | null; close(): Promise<void> }> {
  let leader: string | null = null;
  let stopped = false;
  const sockets = new Set<net.Socket>();
  const check = async () => {
    while (!stopped) {
      const roles = await Promise.all(backends().map(async (b) => ((await health(b))?.role?.role === 'leader' ? b : null)));
      leader = roles.find((r) => r !== null) ?? null;
      await new Promise((r) => setTimeout(r, checkMs));
    }
  };
  const checking = check();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (!leader) return void client.destroy();
    const { port } = new URL(leader);
    const upstream = net.connect(Number(port), '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    leader: () => leader,
    close: async () => {
      stopped = true;
      await checking;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
