import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileEventStore } from './file-event-store';
import { acquireLogLock, LOCK_FILE, LogLockedError, readLogLock, type LockHolder } from './log-lock';

/** The lock of a log directory: one writer per log, stale locks taken over, copies not locked. */
describe('log lock', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lock-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const lockPath = () => path.join(dir, LOCK_FILE);
  /** This process's own holder record, as a lock taken here writes it. */
  const own = (): LockHolder => {
    const { release } = acquireLogLock(dir);
    const h = readLogLock(dir)!;
    release();
    return h;
  };
  const plant = (h: Partial<LockHolder>) => fs.writeFileSync(lockPath(), JSON.stringify({ ...own(), token: 'planted', ...h }));
  const leftovers = () => fs.readdirSync(dir).filter((f) => f.startsWith(`${LOCK_FILE}.`));
  /** Takes the lock and checks that the file now names this process under a fresh token. */
  const takeOver = () => {
    const { release, tookOver } = acquireLogLock(dir);
    expect(readLogLock(dir)).toMatchObject({ pid: process.pid, token: expect.not.stringMatching(/^planted$/) });
    release();
    expect(fs.existsSync(lockPath())).toBe(false);
    expect(leftovers()).toEqual([]);
    return tookOver;
  };

  it('names this process while held, refuses a second taker (even in the same process), and goes on release', () => {
    const { release, tookOver } = acquireLogLock(dir);
    expect(tookOver).toBeNull();
    const h = readLogLock(dir)!;
    expect(h).toMatchObject({ pid: process.pid, hostname: os.hostname() });
    expect(fs.statSync(lockPath()).mode & 0o777).toBe(0o600);
    let refused: unknown;
    try {
      acquireLogLock(dir);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(LogLockedError);
    expect((refused as LogLockedError).holder.token).toBe(h.token);
    expect((refused as Error).message).toBe(`the event log ${dir} is in use by another relay (pid ${process.pid}, since ${h.since})`);
    release();
    expect(fs.existsSync(lockPath())).toBe(false);
    acquireLogLock(dir).release();
    expect(leftovers()).toEqual([]);
  });

  it('takes over the lock of a process that died', () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    plant({ pid: dead, procStart: null, since: '2026-03-01T00:00:00.000Z' });
    expect(takeOver()).toEqual({ pid: dead, since: '2026-03-01T00:00:00.000Z' });
  });

  it('takes over a lock whose pid now belongs to another process (start time differs)', () => {
    plant({ pid: process.pid, procStart: '1' });
    takeOver();
  });

  it('takes over a lock copied along with the log (it names another directory)', () => {
    plant({ dirId: '0:0' });
    takeOver();
  });

  it('takes over a lock file nobody can read as one', () => {
    fs.writeFileSync(lockPath(), 'not json');
    expect(takeOver()).toEqual({ pid: null, since: null });
  });

  it('never takes a lock held on another host (a shared filesystem): a person must remove it', () => {
    plant({ hostname: 'elsewhere.example', pid: 1 });
    expect(() => acquireLogLock(dir)).toThrow(`is in use by another relay (pid 1 on host elsewhere.example, since`);
    expect(readLogLock(dir)).toMatchObject({ hostname: 'elsewhere.example' });
    // Another host may see the same directory under another dev:ino: still not taken.
    fs.rmSync(lockPath());
    plant({ hostname: 'elsewhere.example', pid: 1, dirId: '0:0' });
    expect(() => acquireLogLock(dir)).toThrow(LogLockedError);
    expect(readLogLock(dir)).toMatchObject({ hostname: 'elsewhere.example', dirId: '0:0' });
  });

  it('release removes only its own lock', () => {
    const { release } = acquireLogLock(dir);
    fs.writeFileSync(lockPath(), JSON.stringify({ ...readLogLock(dir)!, token: 'someone-else' }));
    release();
    expect(readLogLock(dir)).toMatchObject({ token: 'someone-else' });
  });

  it('the store holds the lock while open, and gives it back when open fails', async () => {
    const a = new FileEventStore({ dir, onDurable: () => undefined });
    await a.open({ fromSeq: 1, onEvent: () => undefined });
    const b = new FileEventStore({ dir, onDurable: () => undefined });
    await expect(b.open({ fromSeq: 1, onEvent: () => undefined })).rejects.toBeInstanceOf(LogLockedError);
    // The refused store wrote nothing: the log is a's alone.
    await a.append([{ type: 'relay.stopping', data: { reason: 'test' } }], '2026-03-01T00:00:00.000Z', 'system').durable;
    await a.close();
    expect(fs.existsSync(lockPath())).toBe(false);

    fs.writeFileSync(path.join(dir, 'segment-000000000001.jsonl'), '{"seq":1,"broken":true}\n');
    const c = new FileEventStore({ dir, onDurable: () => undefined });
    await expect(c.open({ fromSeq: 1, onEvent: () => undefined })).rejects.toThrow(/event log broken at seq 1/);
    expect(fs.existsSync(lockPath())).toBe(false);
    expect(leftovers()).toEqual([]);
  });
});
