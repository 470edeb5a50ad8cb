import type { DesktopClientReported, DesktopRequester, NewEvent } from '@svc/events';
import { phoneDisconnected, relayStarted } from '../../../../test/support/events';
import { at, given, Given, T0 } from '../../../../test/support/given';
import type { ReadModels } from '../read-models';
import {
  controlSessionFor,
  desktopTimeoutMs,
  expireControlSessions,
  parseDesktopStatus,
  pickDesktopTarget,
  reportDesktopClient,
  reportedGitStatus,
  reportedText,
  type DesktopReport,
} from './desktop';

/** A desktop client's status as the relay records it (`conn-<name>`, device `dev-<name>`, serving tools). */
const reported = (name: string, over: Partial<DesktopClientReported['data']> = {}): NewEvent<DesktopClientReported> => ({
  type: 'desktop.client_reported',
  data: {
    connId: `conn-${name}`,
    tokenPrefix: `pfx-${name}`,
    deviceId: `dev-${name}`,
    deviceName: name,
    toolsDigest: `digest-${name}`,
    toolCount: 2,
    host: null,
    platform: 'linux',
    version: '1.0.0',
    computerUse: false,
    ...over,
  },
});
const TOOLS = ['desktop_read_file', 'desktop_terminal'];
const serving =
  (tools: readonly string[] = TOOLS) =>
  (): readonly string[] | null =>
    tools;

const report = (over: Partial<DesktopReport> = {}): DesktopReport => ({
  deviceId: 'status-dev',
  deviceName: 'status-name',
  toolsDigest: 'digest-a',
  toolCount: 2,
  host: 'axiom',
  platform: 'linux',
  version: '1.0.0',
  computerUse: false,
  ...over,
});
const conn = (deviceId = 'dev-a', deviceName = 'Axiom') => ({ connId: 'conn-a', tokenPrefix: 'pfx-a', deviceId, deviceName });
const recorded = (data: Partial<DesktopClientReported['data']>) => ({
  type: 'desktop.client_reported' as const,
  data: {
    connId: 'conn-a',
    tokenPrefix: 'pfx-a',
    deviceId: 'dev-a',
    deviceName: 'Axiom',
    toolsDigest: 'digest-a',
    toolCount: 2,
    host: 'axiom',
    platform: 'linux',
    version: '1.0.0',
    computerUse: false,
    ...data,
  },
});

describe('parseDesktopStatus (the CLI’s desktop.status)', () => {
  it('reads the tools sorted and de-duplicated, the identity, and computer use only when enabled', () => {
    expect(
      parseDesktopStatus({
        advertised_tools: ['desktop_terminal', 'desktop_read_file', 'desktop_terminal'],
        device_id: 'd-1',
        device_name: 'Axiom',
        host: 'axiom.local',
        platform: 'linux',
        version: '0.4.2',
        computer_use: { enabled: true },
      }),
    ).toEqual({
      ok: true,
      value: {
        tools: ['desktop_read_file', 'desktop_terminal'],
        deviceId: 'd-1',
        deviceName: 'Axiom',
        host: 'axiom.local',
        platform: 'linux',
        version: '0.4.2',
        computerUse: true,
      },
    });
    for (const computer_use of [true, { enabled: 'yes' }, null, {}])
      expect(parseDesktopStatus({ computer_use })).toMatchObject({ ok: true, value: { computerUse: false } });
  });

  it('an empty status is a client with no tools and no identity; the host stands in for a missing name', () => {
    expect(parseDesktopStatus({})).toEqual({
      ok: true,
      value: { tools: [], deviceId: null, deviceName: null, host: null, platform: null, version: null, computerUse: false },
    });
    expect(parseDesktopStatus({ host: 'axiom', device_name: '  ' })).toMatchObject({ value: { deviceName: 'axiom', host: 'axiom' } });
  });

  it('trims text, drops control characters and cuts each field to its length', () => {
    const r = parseDesktopStatus({ device_name: '  Ax\u0007iom\n ', platform: 'p'.repeat(40), device_id: 'x'.repeat(200), version: 7 });
    expect(r).toMatchObject({ ok: true, value: { deviceName: 'Axiom', platform: 'p'.repeat(32), deviceId: 'x'.repeat(128), version: null } });
  });

  // PROTOCOL.md "Desktop tools": "Tool names: `[a-z][a-z0-9_]{0,63}`, at most 256, else `desktop.error {code: bad_frame}`".
  it('refuses tools that are not a list of at most 256 tool names', () => {
    const max = Array.from({ length: 256 }, (_, i) => `t${i}`);
    expect(parseDesktopStatus({ advertised_tools: max })).toMatchObject({ ok: true });
    expect(parseDesktopStatus({ advertised_tools: [...max, 'one_more'] })).toEqual({ ok: false, message: expect.stringContaining('at most 256') });
    expect(parseDesktopStatus({ advertised_tools: 'desktop_terminal' })).toEqual({ ok: false, message: expect.stringContaining('must be a list') });
    expect(parseDesktopStatus({ advertised_tools: [`a${'b'.repeat(63)}`] })).toMatchObject({ ok: true });
    for (const bad of [`a${'b'.repeat(64)}`, 'Desktop_x', '1tool', 'has-dash', '', 7, null]) {
      expect(parseDesktopStatus({ advertised_tools: ['ok_tool', bad] })).toEqual({
        ok: false,
        message: expect.stringContaining('is not a tool name'),
      });
    }
  });
});

describe('what a desktop client reports (workspace, active_editor)', () => {
  it('a text is trimmed, without control characters, cut to its length; not a string, or blank, is none', () => {
    expect(reportedText('  Ax\u0007iom\n ', 128)).toBe('Axiom');
    expect(reportedText('p'.repeat(40), 32)).toBe('p'.repeat(32));
    for (const v of [7, '  ', null, undefined, {}]) expect(reportedText(v, 32)).toBeNull();
  });

  it('git status: whole counts kept, anything else 0 (ahead and behind: none); not an object: none', () => {
    expect(reportedGitStatus({ staged: 1, modified: -1, untracked: 1.5, ahead: 2 })).toEqual({
      staged: 1,
      modified: 0,
      untracked: 0,
      ahead: 2,
      behind: null,
    });
    expect(reportedGitStatus('clean')).toBeNull();
  });
});

describe('reportDesktopClient', () => {
  it('records a new client under its paired session’s identity', () => {
    given([])
      .when((m) => reportDesktopClient(m, conn(), report()))
      .then([recorded({})]);
  });

  it('takes the status’s identity only where the session has none, then the socket and "desktop"', () => {
    for (const none of ['', 'unknown', 'NONE', 'null']) {
      given([])
        .when((m) => reportDesktopClient(m, conn(none, none), report()))
        .then([recorded({ deviceId: 'status-dev', deviceName: 'status-name' })]);
    }
    given([])
      .when((m) => reportDesktopClient(m, conn('', ''), report({ deviceId: null, deviceName: null })))
      .then([recorded({ deviceId: 'conn-a', deviceName: 'desktop' })]);
  });

  it('a status that changes nothing recorded is not an event; any recorded change is', () => {
    const g = new Given();
    g.when((m) => reportDesktopClient(m, conn(), report()));
    const again = given(g);
    again.when((m) => reportDesktopClient(m, conn(), report())).then([]);
    // The status's own identity is not recorded while the session has one: changing it changes nothing.
    again.when((m) => reportDesktopClient(m, conn(), report({ deviceId: 'other', deviceName: 'other' }))).then([]);
    again
      .when((m) => reportDesktopClient(m, conn(), report({ toolsDigest: 'digest-b', toolCount: 3 })))
      .then([recorded({ toolsDigest: 'digest-b', toolCount: 3 })]);
    again
      .when((m) => reportDesktopClient(m, conn(), report({ toolsDigest: 'digest-b', toolCount: 3, computerUse: true })))
      .then([recorded({ toolsDigest: 'digest-b', toolCount: 3, computerUse: true })]);
  });
});

describe('pickDesktopTarget', () => {
  const pick = (m: ReadModels, selector: string | null, tool = 'desktop_terminal', toolsOf = serving()) =>
    pickDesktopTarget(m, tool, selector, toolsOf);
  const refusal = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e;
    }
    throw new Error('expected a refusal');
  };

  it('no client: 503 desktop.no_client; a socket that sent only its workspace is no client', () => {
    const g = new Given();
    expect(refusal(() => pick(g.models, null))).toMatchObject({ code: 'desktop.no_client', kind: 'unavailable' });
    g.apply([
      {
        type: 'desktop.context_reported',
        data: { connId: 'conn-w', tokenPrefix: 'pfx-w', kind: 'active_editor', activeEditor: { source: 'none', editor: null, cwd: null } },
      },
    ]);
    expect(refusal(() => pick(g.models, null))).toMatchObject({ code: 'desktop.no_client' });
  });

  it('with no selector, the one client; with several, 409 naming them all instead of a guess', () => {
    const g = new Given().apply([reported('axiom')]);
    expect(pick(g.models, null).connId).toBe('conn-axiom');
    g.apply([reported('basalt')]);
    expect(refusal(() => pick(g.models, null))).toMatchObject({
      code: 'desktop.ambiguous_device',
      kind: 'conflict',
      extra: {
        devices: [
          { device_id: 'dev-axiom', device_name: 'axiom' },
          { device_id: 'dev-basalt', device_name: 'basalt' },
        ],
      },
    });
  });

  it('a selector matches device id, name or host, case aside or by letters and digits only', () => {
    const g = new Given().apply([reported('axiom', { deviceName: 'AXIOM-DESKTOP', host: 'ws-7.lan' }), reported('basalt')]);
    for (const selector of ['dev-axiom', 'DEV-AXIOM', 'axiom-desktop', 'axiom desktop', 'Axiom_Desktop', 'ws-7.lan', 'WS7LAN']) {
      expect({ selector, connId: pick(g.models, selector).connId }).toEqual({ selector, connId: 'conn-axiom' });
    }
    expect(refusal(() => pick(g.models, 'granite'))).toMatchObject({
      code: 'desktop.unknown_device',
      kind: 'not_found',
      extra: { devices: [expect.objectContaining({ device_id: 'dev-axiom' }), expect.objectContaining({ device_id: 'dev-basalt' })] },
    });
    // Punctuation alone folds to nothing and matches nobody.
    expect(refusal(() => pick(g.models, '--'))).toMatchObject({ code: 'desktop.unknown_device' });
  });

  it('a selector matching several clients is refused with the ones it matched', () => {
    const g = new Given().apply([reported('one', { host: 'shared' }), reported('two', { host: 'shared' }), reported('three')]);
    expect(refusal(() => pick(g.models, 'Shared'))).toMatchObject({
      code: 'desktop.ambiguous_device',
      extra: {
        devices: [
          { device_id: 'dev-one', device_name: 'one' },
          { device_id: 'dev-two', device_name: 'two' },
        ],
      },
    });
  });

  it('the client must advertise the tool (404 with what it does serve); a disconnected client is gone', () => {
    const g = new Given().apply([reported('axiom')]);
    expect(refusal(() => pick(g.models, null, 'desktop_adb_shell'))).toMatchObject({
      code: 'desktop.tool_not_advertised',
      kind: 'not_found',
      extra: { advertised_tools: TOOLS },
    });
    // Its socket is gone before its disconnect is projected: it left (502), not a tool it lacks (404).
    expect(refusal(() => pick(g.models, null, 'desktop_terminal', () => null))).toMatchObject({ code: 'desktop.client_gone', kind: 'upstream' });
    g.apply([phoneDisconnected({ connId: 'conn-axiom', tokenPrefix: 'pfx-axiom' })]);
    expect(refusal(() => pick(g.models, null))).toMatchObject({ code: 'desktop.no_client' });
  });
});

// PROTOCOL.md "Desktop tools": "30 s; `desktop_computer_*` 180 s; `desktop_adb_*` 300 s" (the values are configuration).
describe('desktopTimeoutMs', () => {
  it('adb and computer-use tools get their own timeouts, every other tool the default', () => {
    const t = { defaultMs: 1, computerUseMs: 2, adbMs: 3 };
    expect(desktopTimeoutMs('desktop_adb_shell', t)).toBe(3);
    expect(desktopTimeoutMs('desktop_computer_click', t)).toBe(2);
    expect(desktopTimeoutMs('desktop_terminal', t)).toBe(1);
    expect(desktopTimeoutMs('desktop_computer', t)).toBe(1);
    expect(desktopTimeoutMs('my_desktop_adb_shell', t)).toBe(1);
  });
});

describe('computer-use control sessions', () => {
  const requester = (over: Partial<DesktopRequester> = {}): DesktopRequester => ({
    requesterDeviceId: 'svc-agent:chat-1',
    chatSessionId: 'chat-1',
    runId: 'run-1',
    profile: null,
    ...over,
  });
  const target = (m: ReadModels, name = 'axiom') => m.desktop.client(`conn-${name}`)!;
  const started = (controlId: string, r: DesktopRequester, name = 'axiom') => ({
    type: 'desktop.control_session_started' as const,
    data: { controlId, connId: `conn-${name}`, targetDeviceId: `dev-${name}`, ...r },
  });
  const ended = (controlId: string, reason: 'run_changed' | 'idle' | 'capacity', name = 'axiom') => ({
    type: 'desktop.control_session_ended' as const,
    data: { controlId, connId: `conn-${name}`, targetDeviceId: `dev-${name}`, reason },
  });
  /** The decision of one call: the control session's events. */
  const session =
    (r: DesktopRequester | null, newId: string, name = 'axiom') =>
    (m: ReadModels) =>
      controlSessionFor(m, r, target(m, name), newId).events;

  it('no requester, no session', () => {
    const g = new Given().apply([reported('axiom')]);
    expect(controlSessionFor(g.models, null, target(g.models), 'c-1')).toEqual({ controlId: null, events: [] });
  });

  it('the first call of a run starts a session; later calls of the run reuse it', () => {
    const g = new Given().apply([reported('axiom')]);
    given(g)
      .when(session(requester(), 'c-1'))
      .then([started('c-1', requester())]);
    expect(controlSessionFor(g.models, requester(), target(g.models), 'c-2')).toEqual({ controlId: 'c-1', events: [] });
  });

  it('another run of the same requester, chat and profile on the same target ends the old session', () => {
    const g = new Given().apply([reported('axiom'), reported('basalt'), started('c-1', requester())]);
    given(g)
      .when(session(requester({ runId: 'run-2' }), 'c-2'))
      .then([ended('c-1', 'run_changed'), started('c-2', requester({ runId: 'run-2' }))]);
    // Another chat, another profile or another target is another seat: both sessions live.
    for (const [r, id, name] of [
      [requester({ chatSessionId: 'chat-2', runId: 'run-3' }), 'c-3', 'axiom'],
      [requester({ profile: 'work', runId: 'run-4' }), 'c-4', 'axiom'],
      [requester({ runId: 'run-5' }), 'c-5', 'basalt'],
    ] as const) {
      given(g)
        .when(session(r, id, name))
        .then([started(id, r, name)]);
    }
    expect(g.models.desktop.controlSessions().map((c) => c.controlId)).toEqual(['c-2', 'c-3', 'c-4', 'c-5']);
  });

  // PROTOCOL.md "Desktop tools": "past 256 live ones, the least recently used" ends.
  it('past 256 live sessions the least recently used ends', () => {
    const g = new Given().apply([reported('axiom')]);
    for (let i = 0; i < 256; i++) g.event(started(`c-${i}`, requester({ chatSessionId: `chat-${i}` })), at(T0, i));
    // A call under c-0 uses it: c-1 is now the least recently used.
    g.event(
      {
        type: 'desktop.command_sent',
        data: {
          requestId: 'r',
          tool: 'desktop_computer_click',
          connId: 'conn-axiom',
          tokenPrefix: 'pfx-axiom',
          deviceId: 'dev-axiom',
          timeoutMs: 1,
          controlId: 'c-0',
        },
      },
      at(T0, 300),
    );
    const next = requester({ chatSessionId: 'chat-new' });
    given(g)
      .when(session(next, 'c-new'), at(T0, 301))
      .then([ended('c-1', 'capacity'), started('c-new', next)]);
    expect(g.models.desktop.controlSessions()).toHaveLength(256);
  });

  // PROTOCOL.md "Desktop tools": "15 minutes unused (the sweep, by the injected clock)".
  it('the sweep ends a session 15 minutes after its last use, not before', () => {
    const g = new Given().apply([reported('axiom'), started('c-1', requester())], T0);
    const sweep = given(g);
    sweep.when(expireControlSessions, at(T0, 15 * 60 - 1)).then([]);
    sweep.when(expireControlSessions, at(T0, 15 * 60)).then([ended('c-1', 'idle')]);
    sweep.when(expireControlSessions, at(T0, 16 * 60)).then([]);
  });

  it('a session dies with its target’s socket and at a restart', () => {
    const g = new Given().apply([
      reported('axiom'),
      started('c-1', requester()),
      phoneDisconnected({ connId: 'conn-axiom', tokenPrefix: 'pfx-axiom' }),
    ]);
    expect(g.models.desktop.controlSessions()).toEqual([]);
    const h = new Given().apply([reported('axiom'), started('c-1', requester()), relayStarted()]);
    expect(h.models.desktop.controlSessions()).toEqual([]);
  });
});
