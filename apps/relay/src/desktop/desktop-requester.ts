import { clientNames, type Principal, type Spelling } from '@svc/domain';
import type { DesktopRequester } from '@svc/events';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Who asks, for a computer-use control session: the host's tool names its chat session, run and profile
 * in `X-Svc-Relay-Chat-Session`, `-Run-Id`, `-Profile` (the `X-Hermes-Relay-*` spelling too; the reference
 * tool's desktop_tool.py). The requester is the caller the relay authenticated: a bearer's paired device,
 * else (the operator's loopback, the agent's own tool) the agent's chat session, `<brand>-agent:<chat>`.
 * Without a run there is no control session (the client then uses its own compatibility mode).
 */
export function desktopRequesterOf(caller: Principal, headers: IncomingHttpHeaders, spelling: Spelling): DesktopRequester | null {
  const header = (name: string): string | null => {
    const raw = headers[`x-svc-relay-${name}`] ?? headers[`x-hermes-relay-${name}`];
    const v = (Array.isArray(raw) ? raw[0] : raw)
      ?.replace(/[\x00-\x1f\x7f]/g, '')
      .trim()
      .slice(0, 256);
    return v ? v : null;
  };
  const runId = header('run-id');
  const chatSessionId = header('chat-session');
  if (!runId) return null;
  const requesterDeviceId =
    caller.kind === 'device'
      ? caller.deviceId || `device:${caller.tokenPrefix}`
      : chatSessionId
        ? `${clientNames(spelling).brand}-agent:${chatSessionId}`
        : null;
  return requesterDeviceId ? { requesterDeviceId, chatSessionId, runId, profile: header('profile') } : null;
}
