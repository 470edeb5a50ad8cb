import { nextCode, Phone, registerCode, type Frame, type TestRelay } from './harness';

/**
 * A desktop client shaped like the desktop CLI's daemon (desktop/src: RelayTransport's auth, router.ts's
 * `desktop.status` and answers, workspaceContext.ts's bare `workspace` frame): what the relay must serve.
 */
export const CLI_TOOLS = ['desktop_read_file', 'desktop_write_file', 'desktop_terminal', 'desktop_search_files', 'desktop_clipboard_read'];

export class FakeDesktop {
  private handler: (cmd: Frame) => Record<string, unknown> | null = (cmd) => ({ ok: true, result: { echoed: cmd.payload.args } });

  private constructor(
    readonly phone: Phone,
    readonly token: string,
    readonly deviceId: string,
  ) {
    phone.ws.on('message', (data) => {
      const f = JSON.parse(data.toString()) as Frame;
      if (f.channel !== 'desktop' || f.type !== 'desktop.command') return;
      const answer = this.handler(f);
      if (answer) this.respond(f.payload.request_id as string, answer);
    });
  }

  static async pair(
    relay: TestRelay,
    opts: { name?: string; deviceId?: string; grants?: Record<string, string | number | false> } = {},
  ): Promise<FakeDesktop> {
    const code = nextCode();
    // The desktop grant is opt-in: a desktop CLI is paired with `svc relay pair --grants desktop=7d`.
    const res = await registerCode(relay, code, { grants: { desktop: '7d', ...opts.grants } });
    if (res.status !== 200) throw new Error(`register failed: ${res.status}`);
    const phone = await Phone.connect(relay.url);
    const deviceId = opts.deviceId ?? `desk-${code.toLowerCase()}`;
    const ok = await phone.auth({
      pairing_code: code,
      device_name: opts.name ?? 'axiom-desktop',
      device_hostname: opts.name ?? 'axiom-desktop',
      device_platform: 'linux',
      client_surface: 'desktop',
      device_form_factor: 'desktop',
      device_id: deviceId,
      supports: { typed_stream_events: true, event_schema_version: 1 },
    });
    if (ok.type !== 'auth.ok') throw new Error(`auth failed: ${JSON.stringify(ok)}`);
    return new FakeDesktop(phone, ok.payload.session_token as string, deviceId);
  }

  /** The CLI's `desktop.status` (router.ts): prefixed type, tools, identity, process facts. */
  status(tools: string[] = CLI_TOOLS, extra: Record<string, unknown> = {}): void {
    this.phone.send('desktop', 'desktop.status', {
      advertised_tools: tools,
      host: 'axiom-desktop',
      platform: 'linux',
      arch: 'x64',
      node: 'v20.20.2',
      version: '0.9.0',
      pid: 4242,
      started_at_ms: 1,
      uptime_ms: 5,
      interactive: false,
      device_id: this.deviceId,
      device_name: 'axiom-desktop',
      ...extra,
    });
  }

  /** The CLI's workspace report (bare type, sent once after the first auth.ok). */
  workspace(cwd = '/home/ana/src/relay'): void {
    this.phone.send('desktop', 'workspace', {
      version: 1,
      cwd,
      git_root: cwd,
      git_branch: 'main',
      git_status_summary: { staged: 1, modified: 2, untracked: 0 },
      repo_name: 'relay',
      hostname: 'axiom-desktop',
      platform: 'linux',
      arch: 'x64',
      active_shell: 'bash',
    });
  }

  onCommand(handler: (cmd: Frame) => Record<string, unknown> | null): void {
    this.handler = handler;
  }

  respond(requestId: string, answer: Record<string, unknown>): void {
    this.phone.send('desktop', 'desktop.response', { request_id: requestId, ...answer });
  }

  close(): void {
    this.phone.close();
  }
}
