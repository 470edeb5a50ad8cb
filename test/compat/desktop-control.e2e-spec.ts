import { type Frame, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { CLI_TOOLS, FakeDesktop } from '../support/desktop';
import { startRelay } from './client-relay';

/**
 * The desktop CLI accepts a `desktop_computer_*` call with a `control_session` only when it passes its
 * router's check (desktop/src/tools/router.ts 170-215 parseControlAuthority: version 1; id, request_id,
 * requester_device_id, target_device_id, run_id strings of 1-256 printable characters; request_id equal to
 * the command's; target_device_id equal to its own device id), and otherwise answers "invalid server
 * control_session binding" (router.ts 433-437). The host's tool sends the context as
 * X-Hermes-Relay-Chat-Session / -Run-Id / -Profile (plugin/tools/desktop_tool.py 85-89).
 */
function cliAccepts(controlSession: unknown, requestId: string, ownDeviceId: string): boolean {
  if (!controlSession || typeof controlSession !== 'object' || Array.isArray(controlSession)) return false;
  const raw = controlSession as Record<string, unknown>;
  const required = (field: string): string | null => {
    const v = raw[field];
    if (typeof v !== 'string') return null;
    const t = v.trim();
    return t && t.length <= 256 && !/[\u0000-\u001f\u007f]/u.test(t) ? t : null;
  };
  if (raw.version !== 1) return false;
  const [id, bound, requester, target, run] = ['id', 'request_id', 'requester_device_id', 'target_device_id', 'run_id'].map(required);
  return Boolean(id && bound && bound === requestId && requester && target && target === ownDeviceId && run);
}

describe('compat: computer-use control sessions as the desktop CLI checks them', () => {
  let relay: TestRelay;
  afterAll(() => relay.close());

  it("every bound call passes the CLI's binding check; the end frame names the id and the CLI's own device", async () => {
    relay = await startRelay({ config: { desktop: { defaultMs: 2000, computerUseMs: 2000, adbMs: 2000 } } });
    const d = await FakeDesktop.pair(relay, { deviceId: 'f3b1c2d4-desktop' });
    const frames: Frame[] = [];
    d.phone.ws.on('message', (data) => frames.push(JSON.parse(data.toString()) as Frame));
    d.status([...CLI_TOOLS, 'desktop_computer_status']);
    await new Promise((r) => setTimeout(r, 1100));
    const ctx = (run: string) => ({
      'X-Hermes-Relay-Chat-Session': '20260629_aaa',
      'X-Hermes-Relay-Run-Id': run,
      'X-Hermes-Relay-Profile': 'default',
    });
    for (const run of ['run-a', 'run-a', 'run-b'])
      expect((await call(relay, 'POST', '/desktop/desktop_computer_status', {}, ctx(run))).status).toBe(200);
    const cmds = frames.filter((f) => f.type === 'desktop.command').map((f) => f.payload);
    expect(cmds).toHaveLength(3);
    for (const c of cmds) expect(cliAccepts(c.control_session, c.request_id as string, 'f3b1c2d4-desktop')).toBe(true);
    expect((cmds[0].control_session as { requester_device_id: string }).requester_device_id).toBe('hermes-agent:20260629_aaa');
    await new Promise((r) => setTimeout(r, 50));
    const end = frames.find((f) => f.type === 'desktop.control_session_end')!.payload;
    // router.ts 310-319: it matches the id and its own device id before dropping the authority.
    expect(end).toEqual({
      version: 1,
      id: (cmds[0].control_session as { id: string }).id,
      target_device_id: 'f3b1c2d4-desktop',
      reason: 'requester run changed',
    });
    d.phone.close();
  });
});
