import { execFileSync } from 'node:child_process';
import type { Phone } from './harness';

/** Collects `terminal.output` per shell name from a test phone, and waits for text to appear. */
export class Screen {
  readonly text = new Map<string, string>();
  private waiters: Array<() => void> = [];

  constructor(readonly phone: Phone) {
    phone.ws.on('message', (data) => {
      const f = JSON.parse(data.toString()) as { channel: string; type: string; payload: Record<string, unknown> };
      if (f.channel !== 'terminal' || f.type !== 'terminal.output') return;
      const name = String(f.payload.session_name);
      this.text.set(name, (this.text.get(name) ?? '') + String(f.payload.data));
      for (const w of this.waiters) w();
    });
  }

  of(name = 'main'): string {
    return this.text.get(name) ?? '';
  }

  clear(name = 'main'): void {
    this.text.set(name, '');
  }

  /** Resolves with the match once the shell's output (since the last clear) matches `re`. */
  waitFor(re: RegExp, name = 'main', timeoutMs = 15_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const m = this.of(name).match(re);
        if (m) {
          clearTimeout(timer);
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve(m);
          return true;
        }
        return false;
      };
      const waiter = (): void => void check();
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`output of "${name}" never matched ${re}; got ${JSON.stringify(this.of(name).slice(-500))}`));
      }, timeoutMs);
      this.waiters.push(waiter);
      check();
    });
  }
}

export type Proc = { pid: number; ppid: number; sid: number; stat: string; comm: string };

/** Every process on the host, from `ps` (independent of the relay's own /proc reading). */
export function processes(): Proc[] {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,sid=,stat=,comm='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 5)
    .map(([pid, ppid, sid, stat, ...comm]) => ({ pid: Number(pid), ppid: Number(ppid), sid: Number(sid), stat, comm: comm.join(' ') }));
}

/** Processes (zombies included) left in the session a shell led. */
export function sessionLeftovers(sid: number): Proc[] {
  return processes().filter((p) => p.sid === sid);
}

/** Zombies whose parent is this process (the relay runs in the test process). */
export function ownZombies(): Proc[] {
  return processes().filter((p) => p.ppid === process.pid && p.stat.startsWith('Z'));
}

export async function eventually(check: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Waits briefly (a child that just exited is a zombie until its parent's waitpid runs), then returns
 * what is still there: processes left in `sid`'s session (all, or only live ones) and zombies of ours.
 */
export async function leftoversAfter(sid: number, opts: { liveOnly?: boolean } = {}): Promise<{ session: Proc[]; zombies: Proc[] }> {
  const look = () => ({
    session: sessionLeftovers(sid).filter((p) => !opts.liveOnly || !p.stat.startsWith('Z')),
    zombies: ownZombies(),
  });
  const until = Date.now() + 2000;
  let seen = look();
  while ((seen.session.length > 0 || seen.zombies.length > 0) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 25));
    seen = look();
  }
  return seen;
}
