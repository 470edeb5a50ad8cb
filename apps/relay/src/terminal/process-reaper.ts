import * as fs from 'node:fs';

/** One process as /proc tells it (Linux). */
export type ProcInfo = { pid: number; ppid: number; pgid: number; sid: number; state: string };

const HAS_PROC = process.platform === 'linux' && fs.existsSync('/proc/self/stat');

export function readProc(pid: number): ProcInfo | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may hold spaces and parentheses: the fields we want follow the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, state: rest[0], ppid: Number(rest[1]), pgid: Number(rest[2]), sid: Number(rest[3]) };
  } catch {
    return null;
  }
}

/** Every process (zombies included) whose session id is `sid`. Empty where /proc is missing. */
export function sessionMembers(sid: number): ProcInfo[] {
  if (!HAS_PROC) return [];
  const out: ProcInfo[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProc(Number(name));
    if (p && p.sid === sid) out.push(p);
  }
  return out;
}

const alive = (p: ProcInfo): boolean => p.state !== 'Z' && p.state !== 'X';

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

/**
 * Waits until none of `pids` is alive. A dead one is only gone once its parent reaped it, so the next
 * round does not kill that parent first; a zombie whose parent never reaps does not hold things up.
 */
async function waitGone(pids: number[], sid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    const left = pids.map((pid) => readProc(pid)).filter((p): p is ProcInfo => p !== null && p.sid === sid);
    const living = left.filter(alive);
    if (left.length === 0) return true;
    if (Date.now() >= until) return living.length === 0;
    await sleep(living.length === 0 ? 5 : 15);
  }
}

export type ReapOptions = {
  /** The polite signal: SIGHUP for a shell (what a hangup sends), SIGTERM for a TUI gateway. */
  signal: NodeJS.Signals;
  /** How long the polite signal gets before SIGKILL. */
  graceMs: number;
};

/**
 * Ends every process of the session a pty or detached child leads (node-pty and `detached: true` both
 * make the child a session leader, so sid = its pid). Leaves go first, so each parent is still alive to
 * reap its children: no zombie is left to an init that may not reap (containers), no orphan keeps
 * running. A process that made its own session (setsid, a daemon) is deliberately out of reach.
 * Without /proc (not Linux) it signals the leader's process group.
 */
export async function reapSession(leader: number, opts: ReapOptions): Promise<void> {
  if (!HAS_PROC) {
    signal(-leader, opts.signal);
    signal(-leader, 'SIGCONT');
    await sleep(opts.graceMs);
    signal(-leader, 'SIGKILL');
    return;
  }
  for (let round = 0; round < 8; round++) {
    const members = sessionMembers(leader).filter(alive);
    if (members.length === 0) return;
    const parents = new Set(members.map((p) => p.ppid));
    // Leaves: no live child inside the session. After a few rounds (a loop keeps forking), everyone.
    const targets = round < 6 ? members.filter((p) => !parents.has(p.pid)) : members;
    const pids = (targets.length ? targets : members).map((p) => p.pid);
    for (const pid of pids) {
      signal(pid, opts.signal);
      signal(pid, 'SIGCONT');
    }
    if (await waitGone(pids, leader, opts.graceMs)) continue;
    for (const pid of pids) signal(pid, 'SIGKILL');
    await waitGone(pids, leader, 1000);
  }
  for (const p of sessionMembers(leader).filter(alive)) signal(p.pid, 'SIGKILL');
}
