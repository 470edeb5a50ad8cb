import { ReadModels } from '@svc/domain';
import { eventsDir, replayLog } from '@svc/events';
import { pairPhone, readEvents, startRelay, type Frame, type TestRelay } from '../support/harness';
import { call, REMOTE } from '../support/http';
import { CLI_TOOLS, FakeDesktop } from '../support/desktop';

const desktopEvents = (relay: TestRelay) => readEvents(relay.home).filter((e) => e.type.startsWith('desktop.'));

describe('desktop tools (spec 4.6): a desktop client over a real socket, the host calling /desktop/*', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    // Generous tool timeouts: a call answered in time must not time out on a loaded machine. The timeout itself
    // is tested on a relay of its own with short ones.
    relay = await startRelay({ config: { desktop: { defaultMs: 30_000, computerUseMs: 30_000, adbMs: 30_000 } } });
  });
  afterAll(() => relay.close());

  let pings = 0;
  /**
   * Everything `d` sent before is taken and durable: its frames are handled in order on one socket, so the
   * pong to a ping sent after them comes after they were handled (each decided and appended at once), then
   * the log is drained. No sleep: a loaded machine only makes it slower.
   */
  async function settled(...ds: FakeDesktop[]): Promise<void> {
    await settledOn(relay, ds);
  }
  async function settledOn(r: TestRelay, ds: FakeDesktop[]): Promise<void> {
    for (const d of ds) {
      const id = `settle-${++pings}`;
      d.phone.send('system', 'ping', { ts: 1 }, id);
      await d.phone.next((f) => f.id === id);
    }
    await r.loop.drain();
  }
  /** The relay has seen every desktop socket close. */
  async function noDesktops(): Promise<void> {
    for (let i = 0; ; i++) {
      if ((await call(relay, 'GET', '/desktop/health')).body.clients.length === 0) return;
      if (i > 2000) throw new Error('a desktop socket never closed at the relay');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('with no client: ping 503 (the host tools hide themselves), health 200, a call 503; nothing logged', async () => {
    const before = readEvents(relay.home).length;
    const ping = await call(relay, 'GET', '/desktop/_ping');
    expect(ping).toMatchObject({ status: 503, body: { ok: false, code: 'desktop.no_client' } });
    const health = await call(relay, 'GET', '/desktop/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ connected: false, advertised_tools: [], pending_commands: 0, clients: [], recent_commands: [] });
    const r = await call(relay, 'POST', '/desktop/desktop_read_file', { path: '/etc/hosts' });
    expect(r).toMatchObject({ status: 503, body: { ok: false, code: 'desktop.no_client', error: expect.stringContaining('desktop CLI') } });
    expect(readEvents(relay.home)).toHaveLength(before);
  });

  it('a client that reports its workspace and tools is ready; a repeated status (the 30 s heartbeat) is not logged again', async () => {
    const d = await FakeDesktop.pair(relay);
    d.workspace();
    expect((await call(relay, 'GET', '/desktop/_ping')).status).toBe(503); // a workspace alone serves nothing
    d.status();
    d.status();
    await settled(d);
    expect((await call(relay, 'GET', '/desktop/_ping')).body).toEqual({ ok: true, clients: 1 });
    expect((await call(relay, 'GET', '/desktop/_ping?tool=desktop_terminal')).status).toBe(200);
    expect((await call(relay, 'GET', '/desktop/_ping?tool=desktop_computer_status')).body).toMatchObject({ code: 'desktop.tool_not_advertised' });
    const health = (await call(relay, 'GET', '/desktop/health')).body;
    expect(health).toMatchObject({
      connected: true,
      advertised_tools: [...CLI_TOOLS].sort(),
      host: 'axiom-desktop',
      platform: 'linux',
      version: '0.9.0',
    });
    expect(health.clients[0]).toMatchObject({
      device_id: d.deviceId,
      device_name: 'axiom-desktop',
      serving: true,
      workspace: { cwd: '/home/ana/src/relay', git_branch: 'main', repo_name: 'relay', git_status_summary: { staged: 1, modified: 2, untracked: 0 } },
    });
    expect(health.last_seen_at).toBeGreaterThan(1e9);
    expect(desktopEvents(relay).map((e) => e.type)).toEqual(['desktop.context_reported', 'desktop.client_reported']);
    d.phone.send('desktop', 'active_editor', {
      version: 1,
      ts: 1,
      source: 'tmux',
      cwd: '/home/ana/src/relay',
      command: 'vim secrets.txt',
      editor: 'vim',
    });
    await settled(d);
    expect((await call(relay, 'GET', '/desktop/health')).body.clients[0].active_editor).toEqual({
      source: 'tmux',
      editor: 'vim',
      cwd: '/home/ana/src/relay',
    });
    expect(JSON.stringify(readEvents(relay.home))).not.toContain('secrets.txt');
    d.close();
    await noDesktops();
    expect((await call(relay, 'GET', '/desktop/health')).body).toMatchObject({ connected: false, clients: [] });
  });

  it('a call goes out as desktop.command (id = request_id, device selector not forwarded) and returns the client answer with its target; args never logged', async () => {
    const d = await FakeDesktop.pair(relay);
    d.status();
    await settled(d);
    let seen: Frame | null = null;
    d.onCommand((cmd) => {
      seen = cmd;
      return { ok: true, result: { content: 'file text', size: 9 } };
    });
    const r = await call(relay, 'POST', '/desktop/desktop_read_file', {
      path: '/home/ana/private-notes.md',
      max_bytes: 100,
      device: 'AXIOM desktop',
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      request_id: seen!.payload.request_id,
      ok: true,
      result: { content: 'file text', size: 9 },
      target: { device_id: d.deviceId, device_name: 'axiom-desktop' },
    });
    expect(seen!.id).toBe(seen!.payload.request_id);
    expect(seen!.payload).toEqual({
      request_id: expect.any(String),
      tool: 'desktop_read_file',
      args: { path: '/home/ana/private-notes.md', max_bytes: 100 },
      target_device_id: d.deviceId,
    });
    const evs = desktopEvents(relay).filter((e) => e.type.startsWith('desktop.command'));
    expect(evs.slice(-2).map((e) => [e.type, e.data.tool, e.data.outcome ?? null])).toEqual([
      ['desktop.command_sent', 'desktop_read_file', null],
      ['desktop.command_completed', 'desktop_read_file', 'ok'],
    ]);
    expect(JSON.stringify(readEvents(relay.home))).not.toMatch(/private-notes|file text/);
    // A tool that failed on the desktop is the client's answer, not the relay's error: 200 with ok false.
    d.onCommand(() => ({ ok: false, error: 'ENOENT: no such file' }));
    const failed = await call(relay, 'POST', '/desktop/desktop_read_file', { path: '/nope' });
    expect(failed).toMatchObject({ status: 200, body: { ok: false, error: 'ENOENT: no such file' } });
    expect(desktopEvents(relay).at(-1)!.data.outcome).toBe('tool_error');
    d.close();
    await noDesktops();
  });

  it('many calls in flight, answered out of order, each to its own caller', async () => {
    const d = await FakeDesktop.pair(relay);
    d.status();
    await settled(d);
    const held: Frame[] = [];
    d.onCommand((cmd) => {
      held.push(cmd);
      if (held.length === 20)
        for (const c of [...held].reverse())
          d.respond(c.payload.request_id as string, { ok: true, result: { n: (c.payload.args as { n: number }).n } });
      return null;
    });
    const results = await Promise.all(Array.from({ length: 20 }, (_, n) => call(relay, 'POST', '/desktop/desktop_terminal', { n, command: 'true' })));
    expect(results.map((r) => r.body.result.n)).toEqual(Array.from({ length: 20 }, (_, n) => n));
    d.close();
    await noDesktops();
  });

  it('a client that never answers: 504 after the tool timeout, and its late answer is refused on the channel', async () => {
    const relay = await startRelay({ config: { desktop: { defaultMs: 400, computerUseMs: 600, adbMs: 800 } } });
    const d = await FakeDesktop.pair(relay);
    d.status([...CLI_TOOLS, 'desktop_computer_status']);
    await settledOn(relay, [d]);
    let id = '';
    d.onCommand((cmd) => {
      id = cmd.payload.request_id as string;
      return null;
    });
    const started = Date.now();
    const r = await call(relay, 'POST', '/desktop/desktop_terminal', { command: 'sleep 100' });
    expect(r).toMatchObject({ status: 504, body: { ok: false, code: 'desktop.timeout', request_id: id } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    d.respond(id, { ok: true, result: 'late' });
    const err = await d.phone.type('desktop', 'desktop.error');
    expect(err.payload).toMatchObject({ code: 'unknown_request', request_id: id });
    // computer-use tools wait longer (600 ms here, 180 s by default).
    const t0 = Date.now();
    const cu = await call(relay, 'POST', '/desktop/desktop_computer_status', {});
    expect(cu.status).toBe(504);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(580);
    expect(desktopEvents(relay).filter((e) => e.data.outcome === 'timeout')).toHaveLength(2);
    d.close();
    await relay.close();
  });

  it('two desktops: no selector is refused (409) rather than guessed; a selector picks one; another socket cannot answer for it', async () => {
    const a = await FakeDesktop.pair(relay, { name: 'work-laptop' });
    const b = await FakeDesktop.pair(relay, { name: 'home-pc' });
    a.status(CLI_TOOLS, { host: 'work-laptop', device_name: 'work-laptop' });
    b.status(['desktop_terminal'], { host: 'home-pc', device_name: 'home-pc' });
    await settled(a, b);
    const none = await call(relay, 'POST', '/desktop/desktop_terminal', { command: 'ls' });
    expect(none).toMatchObject({ status: 409, body: { ok: false, code: 'desktop.ambiguous_device' } });
    expect(none.body.devices.map((x: { device_name: string }) => x.device_name).sort()).toEqual(['home-pc', 'work-laptop']);
    expect((await call(relay, 'POST', '/desktop/desktop_terminal', { device: 'nowhere' })).body.code).toBe('desktop.unknown_device');
    expect((await call(relay, 'POST', '/desktop/desktop_read_file', { device: 'home-pc' })).body.code).toBe('desktop.tool_not_advertised');
    // b tries to answer a's call: refused; a's own answer lands.
    a.onCommand((cmd) => {
      b.respond(cmd.payload.request_id as string, { ok: true, result: 'forged' });
      setTimeout(() => a.respond(cmd.payload.request_id as string, { ok: true, result: 'genuine' }), 30);
      return null;
    });
    b.onCommand(() => ({ ok: true, result: 'from b' }));
    const r = await call(relay, 'POST', '/desktop/desktop_terminal', { device_id: a.deviceId, command: 'ls' });
    expect(r.body).toMatchObject({ ok: true, result: 'genuine', target: { device_id: a.deviceId } });
    expect((await b.phone.type('desktop', 'desktop.error')).payload.code).toBe('unknown_request');
    expect((await call(relay, 'POST', '/desktop/desktop_terminal', { device: 'HOME_PC' })).body).toMatchObject({ result: 'from b' });
    // The readiness check reads a selector by the same rule as the call it comes before (desktopsMatching).
    expect((await call(relay, 'GET', '/desktop/_ping?device=HOME_PC&tool=desktop_terminal')).body).toEqual({ ok: true, clients: 2 });
    expect((await call(relay, 'GET', '/desktop/_ping?device=nowhere')).body).toMatchObject({ code: 'desktop.unknown_device' });
    // The client leaves mid-call: 502 at once, not a timeout.
    a.onCommand(() => {
      setTimeout(() => a.close(), 10);
      return null;
    });
    const gone = await call(relay, 'POST', '/desktop/desktop_terminal', { device: 'work-laptop' });
    expect(gone).toMatchObject({ status: 502, body: { code: 'desktop.client_gone' } });
    b.close();
    await noDesktops();
  });

  it('bad input: clean 4xx, nothing sent, nothing logged', async () => {
    const d = await FakeDesktop.pair(relay);
    d.status();
    await settled(d);
    let sent = 0;
    d.onCommand(() => {
      sent++;
      return { ok: true };
    });
    const before = readEvents(relay.home).length;
    const bad: Array<[string, string, unknown, Record<string, string>, number]> = [
      ['POST', '/desktop/Bad-Name', {}, {}, 400],
      ['POST', '/desktop/desktop_terminal', [1, 2], {}, 400],
      ['POST', '/desktop/desktop_terminal', { device: 7 }, {}, 400],
      ['POST', '/desktop/desktop_terminal', {}, REMOTE, 401],
      ['GET', '/desktop/health', undefined, REMOTE, 401],
      ['POST', '/desktop/desktop_terminal', {}, { authorization: 'Bearer not-a-real-token-000000000000000000000000' }, 401],
    ];
    for (const [method, url, body, headers, status] of bad) {
      const r = await call(relay, method, url, body, headers);
      expect([url, r.status]).toEqual([url, status]);
      expect(r.body).toMatchObject({ ok: false, error: expect.any(String), code: expect.any(String) });
    }
    // A phone without the desktop grant may neither call nor serve.
    const phone = await pairPhone(relay, { terms: { grants: { desktop: false } } });
    expect((await call(relay, 'GET', '/desktop/health', undefined, { ...REMOTE, authorization: `Bearer ${phone.token}` })).status).toBe(403);
    phone.phone.send('desktop', 'desktop.status', { advertised_tools: ['desktop_terminal'] });
    expect((await phone.phone.type('desktop', 'desktop.error')).payload.code).toMatch(/grant/);
    // Malformed frames from a desktop: desktop.error, the socket lives on.
    d.phone.send('desktop', 'desktop.status', { advertised_tools: 'desktop_terminal' });
    expect((await d.phone.type('desktop', 'desktop.error')).payload.code).toBe('bad_frame');
    d.phone.send('desktop', 'desktop.frobnicate', {});
    expect((await d.phone.type('desktop', 'desktop.error')).payload.code).toBe('unknown_type');
    expect(sent).toBe(0);
    expect(
      readEvents(relay.home)
        .slice(before)
        .filter((e) => e.type.startsWith('desktop.')),
    ).toEqual([]);
    phone.phone.close();
    // A paired caller with the desktop grant (asked for at pairing), from another host, may call (spec 4.6: desktop grant).
    const caller = await pairPhone(relay, { terms: { grants: { desktop: '7d' } } });
    const r = await call(relay, 'POST', '/desktop/desktop_terminal', { command: 'true' }, { ...REMOTE, authorization: `Bearer ${caller.token}` });
    expect(r).toMatchObject({ status: 200, body: { ok: true } });
    expect(desktopEvents(relay).at(-2)!.actor).toBe(`device:${caller.prefix}`);
    caller.phone.close();
    d.close();
    await noDesktops();
  });

  it('the desktop grant is opt-in: a phone paired with the defaults can neither run a desktop tool (the `id` that ran) nor pose as a desktop', async () => {
    const d = await FakeDesktop.pair(relay);
    d.status();
    await settled(d);
    let ran = 0;
    d.onCommand(() => {
      ran++;
      return { ok: true, result: { stdout: 'uid=1000(ana)' } };
    });
    const phone = await pairPhone(relay);
    expect('desktop' in (phone.ok.payload.grants as object)).toBe(false);
    const auth = { ...REMOTE, authorization: `Bearer ${phone.token}` };
    for (const [method, url] of [
      ['POST', '/desktop/desktop_terminal'],
      ['GET', '/desktop/_ping'],
      ['GET', '/desktop/health'],
    ]) {
      const r = await call(relay, method, url, method === 'POST' ? { command: 'id' } : undefined, auth);
      expect([url, r.status]).toEqual([url, 403]);
      expect(r.body).toMatchObject({ ok: false, code: expect.any(String), error: expect.stringContaining('desktop') });
    }
    expect(ran).toBe(0);
    // Nor may it serve tools: the agent's calls (their arguments) never reach it.
    phone.phone.send('desktop', 'desktop.status', { advertised_tools: ['desktop_read_file'], host: 'fake' });
    expect((await phone.phone.type('desktop', 'desktop.error')).payload).toMatchObject({ code: 'grant_required', grant: 'desktop' });
    expect((await call(relay, 'GET', '/desktop/_ping')).body).toEqual({ ok: true, clients: 1 });
    // The host's own tools (loopback, no bearer) are unaffected.
    expect((await call(relay, 'POST', '/desktop/desktop_terminal', { command: 'id' })).body).toMatchObject({ ok: true });
    expect(ran).toBe(1);
    phone.phone.close();
    d.close();
    await noDesktops();
  });

  it('the log replays to the live desktop and profile state', async () => {
    const d = await FakeDesktop.pair(relay, { name: 'replay-box' });
    d.workspace('/srv/replay');
    d.status();
    await settled(d);
    await call(relay, 'POST', '/desktop/desktop_terminal', { command: 'true' });
    await relay.loop.drain();
    const replayed = new ReadModels();
    replayLog(eventsDir(relay.home), replayed);
    expect(replayed.desktop.snapshot()).toEqual(relay.loop.models.desktop.snapshot());
    expect(replayed.profiles.snapshot()).toEqual(relay.loop.models.profiles.snapshot());
    expect(replayed.desktop.targets().map((c) => c.workspace?.cwd)).toEqual(['/srv/replay']);
    d.close();
    await noDesktops();
  });
});
