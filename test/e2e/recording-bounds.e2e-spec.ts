import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RelayConfig } from '../../apps/relay/src/common/config/relay-config';
import type { DiskSpace } from '../../apps/relay/src/common/loop/disk-guard';
import { pairPhone, type Phone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { call, type Json, operatorFetch } from '../support/http';
import { eventually, Screen } from '../support/terminal-screen';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

const SHELL = path.join(__dirname, '../fixtures/bash-norc');
const KiB = 1024;
const MiB = 1024 * KiB;
jest.setTimeout(60_000);

const recordingsOf = (relay: TestRelay) => path.join(relay.home, 'relay', 'recordings');
/** Bytes of every recording file on disk right now (what the total cap bounds). */
function bytesOnDisk(dir: string): number {
  let n = 0;
  for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    try {
      n += fs.statSync(path.join(dir, f)).size;
    } catch {
      // removed between the listing and the stat: it holds nothing any more
    }
  }
  return n;
}
const saved = (relay: TestRelay) => readEvents(relay.home).filter((e) => e.type === 'terminal.recording_saved');

async function open(phone: Phone, name: string): Promise<void> {
  phone.send('terminal', 'terminal.attach', { session_name: name, cols: 80, rows: 24 }, `a-${name}`);
  await phone.next((f) => f.id === `a-${name}`);
}
async function kill(phone: Phone, name: string): Promise<void> {
  phone.send('terminal', 'terminal.kill', { session_name: name }, `k-${name}`);
  await phone.next((f) => f.id === `k-${name}`);
}

/**
 * The hostile probe of issue 34 (finding 7): live recordings were not counted against the total cap (4 live
 * shells under 1 MiB caps left 4.18 MB on disk) and a low disk did not stop them. Now every byte a live
 * recording writes is claimed against the total first, and a recording that cannot grow stops, marked
 * truncated with why; the shell itself goes on.
 */
describe('terminal recordings: the total cap counts live recordings, the disk guard stops them', () => {
  let relay: TestRelay;
  afterEach(() => relay?.close());

  it('four live shells never put more than the total cap on disk; each stopped recording says truncated and why; the shells keep working', async () => {
    const recording: RelayConfig['terminalRecording'] = { enabled: true, input: false, maxBytes: 48 * KiB, totalBytes: 64 * KiB };
    relay = await startRelay({ config: { terminalShell: SHELL, terminalRecording: recording } });
    const { phone } = await pairPhone(relay);
    const screen = new Screen(phone);
    const names = ['s1', 's2', 's3', 's4'];
    for (const n of names) await open(phone, n);

    // Sampled while the shells write: the bound must hold at every moment, not only once they end.
    const dir = recordingsOf(relay);
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, bytesOnDisk(dir));
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    // 40 KB of output each: 160 KB in all against a 64 KiB total.
    for (const [i, n] of names.entries()) {
      phone.send('terminal', 'terminal.input', { session_name: n, data: `head -c 40000 /dev/zero | tr '\\0' x; echo; echo big-${i}-$((${i}*7))\r` });
    }
    for (const [i, n] of names.entries()) await screen.waitFor(new RegExp(`big-${i}-${i * 7}`), n);
    // Recordings flush at least every second: wait until the files stop growing (or the bound breaks).
    let last = -1;
    let still = 0;
    await eventually(
      () => {
        const now = bytesOnDisk(dir);
        still = now === last ? still + 1 : 0;
        last = now;
        return still >= 60 || most > recording.totalBytes;
      },
      30_000,
      'the recordings to settle',
    );
    // The shells work on, recorded or not.
    for (const [i, n] of names.entries()) {
      phone.send('terminal', 'terminal.input', { session_name: n, data: `echo alive-${i}-$((${i}+100))\r` });
      await screen.waitFor(new RegExp(`alive-${i}-${i + 100}`), n);
    }
    sampling = false;
    await sampler;
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(recording.totalBytes);

    for (const n of names) await kill(phone, n);
    phone.close();
    const events = saved(relay);
    expect(events).toHaveLength(4);
    const stopped = events.filter((e) => e.data.stopped !== undefined);
    // One shell's 40 KB fits the 64 KiB; the others cannot all fit beside it.
    expect(stopped.filter((e) => e.data.stopped === 'total_bytes').length).toBeGreaterThanOrEqual(2);
    for (const e of stopped) expect(e.data.truncated).toBe(true);
    expect(bytesOnDisk(dir)).toBeLessThanOrEqual(recording.totalBytes);

    const list = (await call(relay, 'GET', '/console/api/terminal/recordings')).body;
    expect(list.total_bytes).toBeLessThanOrEqual(recording.totalBytes);
    const rows = new Map((list.recordings as Json[]).map((r) => [r.recording_id, r]));
    for (const e of stopped) {
      const row = rows.get(e.data.recordingId);
      // A recording removed for space afterwards is no longer listed; every listed one says why it stopped.
      if (row) expect(row).toMatchObject({ truncated: true, stopped: e.data.stopped });
    }
    expect(relay.logs.join('')).not.toContain('"statusCode":500');
  });

  it('a low disk stops a live recording (truncated, disk_low) while its shell keeps working', async () => {
    let space: DiskSpace = { freeBytes: 50_000 * MiB, totalBytes: 100_000 * MiB };
    relay = await startRelay({
      config: { terminalShell: SHELL, terminalRecording: { enabled: true, input: false, maxBytes: 64 * MiB, totalBytes: 1024 * MiB } },
      diskSpace: async () => space,
    });
    const { phone, prefix } = await pairPhone(relay);
    const screen = new Screen(phone);
    await open(phone, 'main');
    phone.send('terminal', 'terminal.input', { session_name: 'main', data: 'echo before-low-$((6*7))\r' });
    await screen.waitFor(/before-low-42/);
    const shellId = relay.loop.models.terminal.shellByName(prefix, 'main')!.shellId;
    const file = path.join(recordingsOf(relay), `${shellId}.cast`);
    // The first second's flush has put the recording's start on disk.
    await eventually(() => fs.statSync(file).size > 0, 10_000, 'the recording to start on disk');

    space = { ...space, freeBytes: 10 * MiB };
    await relay.disk.refresh();
    expect(relay.disk.low).toBe(true);
    phone.send('terminal', 'terminal.input', { session_name: 'main', data: 'echo after-low-$((6*7))\r' });
    await screen.waitFor(/after-low-42/);
    phone.send('terminal', 'terminal.input', { session_name: 'main', data: 'echo still-$((2+3))\r' });
    await screen.waitFor(/still-5/);
    await kill(phone, 'main');
    phone.close();

    const [e] = saved(relay);
    expect(e.data).toMatchObject({ recordingId: shellId, truncated: true, stopped: 'disk_low' });
    const res = await fetch(`${relay.url}/console/api/terminal/recordings/${shellId}`);
    expect(res.status).toBe(200);
    const cast = await res.text();
    expect(JSON.parse(cast.split('\n')[0])).toMatchObject({ version: 2 });
    expect(cast).not.toContain('after-low-42');
    expect(cast).not.toContain('still-5');
    const list = (await call(relay, 'GET', '/console/api/terminal/recordings')).body;
    expect(list.recordings).toEqual([expect.objectContaining({ recording_id: shellId, truncated: true, stopped: 'disk_low' })]);
    expect(relay.logs.join('')).toContain('terminal recording stopped');
  });
});
