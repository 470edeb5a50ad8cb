import { listSegments, scanLog } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pairForBackup, reconnectThenRenew } from '../support/backup';
import { svc } from '../support/cli';
import { ensureBuilt, spawnSvc, startRelayProcess, type SvcProcess } from '../support/dist';
import { tempHome } from '../support/harness';

/**
 * Issue 37.5: `svc relay backup` of a running relay while it appends, `svc relay restore` into a new home,
 * and the same phone back on the restored relay with its tokens. Real relay processes, a real `ws` phone,
 * the real CLI in its own process for the backup (so the relay's appends go on while it runs).
 */
jest.setTimeout(120_000);
beforeAll(() => ensureBuilt(), 300_000);

/** Every relay a test starts, stopped after it whatever happened. */
const running = new Set<SvcProcess>();
const start = async (home: string, env: NodeJS.ProcessEnv = {}) => {
  const p = await startRelayProcess(home, env);
  running.add(p);
  return p;
};
const stop = async (p: SvcProcess): Promise<void> => {
  p.child.kill('SIGTERM');
  await p.exited;
  running.delete(p);
};
afterEach(async () => {
  for (const p of running) await stop(p);
});

/** Registers pairing codes (one event each) from a few clients until told to stop; counts what was acknowledged. */
function appendUntil(url: string): { acknowledged: () => number; stop: () => Promise<void> } {
  let done = false;
  let n = 0;
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; !done; i++) {
      const res = await fetch(`${url}/pairing/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: `L${w}${String(i).padStart(4, '0')}` }),
      });
      if (res.status !== 200) throw new Error(`register: ${res.status} ${await res.text()}`);
      n++;
    }
  };
  const all = Promise.all([0, 1, 2, 3].map(worker));
  return {
    acknowledged: () => n,
    stop: async () => {
      done = true;
      await all;
    },
  };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; !check(); i++) {
    if (i > 600) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('svc relay backup and restore across two homes', () => {
  it('backs up a relay while it appends; the restored relay takes the phone back on its session and refresh tokens; verify passes', async () => {
    const homeA = tempHome();
    let a = await start(homeA, { RELAY_LOG_LEVEL: 'WARNING' });
    const phone = await pairForBackup(a.url, 'BK0001', 'dev-backup');
    // A clean stop writes a snapshot: the backup then has one to take, older than its head.
    await stop(a);
    a = await start(homeA, { RELAY_LOG_LEVEL: 'WARNING' });

    const load = appendUntil(a.url);
    await until(() => load.acknowledged() >= 50, 'the first appends');
    const out = path.join(tempHome(), 'relay.backup');
    const atStart = load.acknowledged();
    const backup = spawnSvc(['relay', 'backup', '--out', out, '--json'], { SVC_HOME: homeA });
    const { code } = await backup.exited;
    const duringBackup = load.acknowledged() - atStart;
    await load.stop();
    expect({ code, stderr: backup.stderr() }).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(backup.stdout()) as { head: { seq: number; hash: string }; snapshotSeq: number | null; records: number };
    await stop(a);

    // The relay went on appending while the backup ran and after its head: the backup is a cut, not the end.
    expect(duringBackup).toBeGreaterThan(0);
    const logA = scanLog(path.join(homeA, 'relay', 'events'), { fromSeq: 1 });
    expect(logA.lastSeq).toBeGreaterThan(report.head.seq);
    expect(report.records).toBe(report.head.seq);
    expect(report.snapshotSeq).not.toBeNull();
    expect(report.snapshotSeq!).toBeLessThanOrEqual(report.head.seq);
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    // The manifest's head is a record of A's log, hash and all.
    const headLine = readLine(path.join(homeA, 'relay', 'events'), report.head.seq);
    expect(JSON.parse(headLine)).toMatchObject({ seq: report.head.seq, hash: report.head.hash });

    const homeB = path.join(tempHome(), 'restored');
    const restored = await svc(['relay', 'restore', out, '--home', homeB]);
    expect(restored).toMatchObject({ code: 0, stderr: '' });
    expect(restored.stdout).toContain(`the log is proven to seq ${report.head.seq}`);
    expect(fs.readFileSync(path.join(homeB, 'relay', 'secret.key'))).toEqual(fs.readFileSync(path.join(homeA, 'relay', 'secret.key')));
    expect(fs.existsSync(path.join(homeB, 'relay', 'LOCK'))).toBe(false);
    const verified = await svc(['relay', 'events', 'verify', '--json'], { SVC_HOME: homeB });
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, lastSeq: report.head.seq, lastHash: report.head.hash });

    const b = await start(homeB);
    try {
      // B started from the backup's snapshot (its MAC holds under the restored key), then the log after it.
      await until(() => b.stdout().includes('"msg":"event log opened"'), 'the start-up log line');
      expect(b.stdout()).toContain(`"fromSnapshot":${report.snapshotSeq}`);
      const renewed = await reconnectThenRenew(b.url, phone);
      expect(renewed.session_token).not.toBe(phone.token);
      expect(renewed.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    } finally {
      await stop(b);
    }
    const after = await svc(['relay', 'events', 'verify'], { SVC_HOME: homeB });
    expect(after.code).toBe(0);
  });
});

function readLine(dir: string, seq: number): string {
  const seg = listSegments(dir)
    .filter((s) => s.firstSeq <= seq)
    .at(-1)!;
  const line = fs
    .readFileSync(path.join(dir, seg.file), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`{"seq":${seq},`));
  if (!line) throw new Error(`no record ${seq}`);
  return line;
}
