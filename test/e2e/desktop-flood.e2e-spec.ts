import { ReadModels } from '@svc/domain';
import { eventsDir, replayLog } from '@svc/events';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { FakeDesktop } from '../support/desktop';

/** Bytes of the event log on disk (every segment). */
const logBytes = (relay: TestRelay) =>
  fs
    .readdirSync(eventsDir(relay.home))
    .filter((f) => f.endsWith('.jsonl'))
    .reduce((n, f) => n + fs.statSync(path.join(eventsDir(relay.home), f)).size, 0);

/** Two different lists of 256 long tool names (the most a status may carry). */
const list = (tag: string) => Array.from({ length: 256 }, (_, i) => `desktop_${tag}_${String(i).padStart(3, '0')}_${'x'.repeat(40)}`);
const A = list('alpha');
const B = list('beta');
const digest = (tools: string[]) =>
  createHash('sha256')
    .update(JSON.stringify([...tools].sort()))
    .digest('hex');

/** The socket's frames are handled in order: a pong means every frame sent before the ping was. */
async function handled(d: FakeDesktop, id: string): Promise<void> {
  d.phone.send('system', 'ping', { ts: 1 }, id);
  await d.phone.next((f) => f.id === id, 30_000);
}

const settleWindow = () => new Promise((r) => setTimeout(r, 1300));

describe('a desktop client cannot flood the event log by restating its state', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close('test done'));

  it('2,000 statuses alternating two 256-tool lists: a handful of small events (digest and count, never the list), the last list recorded and served', async () => {
    const d = await FakeDesktop.pair(relay);
    const before = readEvents(relay.home).length;
    const bytes0 = logBytes(relay);
    const t0 = Date.now();
    for (let i = 0; i < 2000; i++) d.status(i % 2 === 0 ? A : B);
    await handled(d, 'after-status-flood');
    const seconds = (Date.now() - t0) / 1000;
    await settleWindow();
    await relay.loop.drain();
    const written = readEvents(relay.home).slice(before);
    const reported = written.filter((e) => e.type === 'desktop.client_reported');
    // One at once, then at most one per second of flood, plus the one at the end of the last window.
    expect(reported.length).toBeGreaterThanOrEqual(1);
    expect(reported.length).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
    expect(written.length).toBeLessThanOrEqual(reported.length + 2); // a last-seen mark at most
    const grown = logBytes(relay) - bytes0;
    expect(grown).toBeLessThan(8 * 1024); // before: ~17 KB per frame, 35 MB for this flood
    for (const e of reported) {
      expect(e.data.tools).toBeUndefined();
      expect(e.data).toMatchObject({ toolCount: 256, toolsDigest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    }
    // The last status sent (B) is what the log ends on, and what calls are routed by.
    expect(reported.at(-1)!.data.toolsDigest).toBe(digest(B));
    expect(relay.loop.models.desktop.targets()[0]).toMatchObject({ toolsDigest: digest(B), toolCount: 256 });
    const health = (await call(relay, 'GET', '/desktop/health')).body;
    expect(health.advertised_tools).toEqual([...B].sort());
    expect(health.clients[0]).toMatchObject({ serving: true, tools_digest: digest(B) });
    expect((await call(relay, 'GET', `/desktop/_ping?tool=${B[7]}`)).status).toBe(200);
    expect((await call(relay, 'POST', `/desktop/${A[7]}`, {})).body.code).toBe('desktop.tool_not_advertised');
    expect((await call(relay, 'POST', `/desktop/${B[7]}`, { n: 1 })).body).toMatchObject({ ok: true, result: { echoed: { n: 1 } } });
    // A status that restates the recorded one writes nothing, even after the window.
    const quiet = readEvents(relay.home).length;
    d.status(B);
    await handled(d, 'restated');
    await settleWindow();
    expect(readEvents(relay.home).filter((e) => e.type === 'desktop.client_reported')).toHaveLength(
      readEvents(relay.home)
        .slice(0, quiet)
        .filter((e) => e.type === 'desktop.client_reported').length,
    );
    d.close();
  });

  it('workspace and active-editor reports alternating as fast as a socket goes: at most one event per second each, the last one recorded', async () => {
    const d = await FakeDesktop.pair(relay, { name: 'ws-flooder' });
    d.status(['desktop_terminal']);
    await handled(d, 'status-in');
    const before = readEvents(relay.home).length;
    const bytes0 = logBytes(relay);
    const t0 = Date.now();
    for (let i = 0; i < 1000; i++) {
      d.workspace(i % 2 === 0 ? `/home/ana/${'a'.repeat(1000)}` : `/home/ana/${'b'.repeat(1000)}`);
      d.phone.send('desktop', 'active_editor', { version: 1, source: 'tmux', editor: i % 2 === 0 ? 'vim' : 'emacs', cwd: '/x'.repeat(500) });
    }
    await handled(d, 'after-context-flood');
    const seconds = (Date.now() - t0) / 1000;
    await settleWindow();
    await relay.loop.drain();
    const written = readEvents(relay.home)
      .slice(before)
      .filter((e) => e.type === 'desktop.context_reported');
    const kinds = (k: string) => written.filter((e) => e.data.kind === k).length;
    expect(kinds('workspace')).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
    expect(kinds('active_editor')).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
    expect(logBytes(relay) - bytes0).toBeLessThan(64 * 1024); // before: ~3 KB a frame, 6 MB here
    const client = (await call(relay, 'GET', '/desktop/health')).body.clients.find((c: { device_name: string }) => c.device_name === 'ws-flooder');
    expect(client.workspace.cwd).toBe(`/home/ana/${'b'.repeat(1000)}`);
    expect(client.active_editor.editor).toBe('emacs');
    d.close();
  });

  it('a window still open when the socket closes is dropped with it; the log replays to the live state', async () => {
    const d = await FakeDesktop.pair(relay, { name: 'leaver' });
    d.status(A);
    d.status(B); // pending in the window
    await handled(d, 'pending');
    d.close();
    await d.phone.closed;
    await settleWindow();
    await relay.loop.drain();
    const replayed = new ReadModels();
    replayLog(eventsDir(relay.home), replayed);
    expect(replayed.desktop.snapshot()).toEqual(relay.loop.models.desktop.snapshot());
    expect(relay.loop.models.desktop.all().find((c) => c.deviceName === 'leaver')).toBeUndefined();
  });
});
