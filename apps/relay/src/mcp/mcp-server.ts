/* eslint-disable @typescript-eslint/no-require-imports */
import { pickDevice, type AgentAnswer, type Driver } from '@svc/domain';
import type { Server as McpServer } from '@modelcontextprotocol/sdk/server/index.js';
import type * as SdkTypes from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AskAgent, CommandFrom } from '../bridge/agent-confirmations';
import type { BridgeService } from '../bridge/bridge.service';
import type { Clock } from '../common/loop/clock';
import type { PhoneThreadsService } from '../threads/threads.service';
import type { CommandLoop } from '../common/loop/command-loop';
import { RESOURCES, readResource } from './mcp-resources';
import { errorResult, toolResult } from './mcp-results';
import type { McpToolSet, ToolEntry } from './mcp-tool-set';
import { pickSelector } from '../bridge/device-selector';
import { ImageSpaces } from './image-space';
import { isGesture, MCP_ONLY } from './mcp-inputs.dto';
import { screenRequest, screenshotResult } from './mcp-screenshot';
import type { ElementLimits } from './element-call';
import { elementCall } from './mcp-elements';
import { runHumanTool } from './mcp-human-tools';

export type McpDeps = {
  bridge: BridgeService;
  tools: McpToolSet;
  loop: CommandLoop;
  clock: Clock;
  logger: Logger;
  version: string;
  /** Threads: how a hand-over reaches a phone that cannot show `bridge.confirm`. */
  threads: PhoneThreadsService;
  /** RELAY_MCP_SCREENSHOT_MAX_SIDE: a screenshot's long side when the call names no max_side. */
  screenshotMaxSide: number;
  /** The element tree's and android_wait_for's bounds (RELAY_MCP_TREE_*, RELAY_MCP_WAIT_*). */
  elements: ElementLimits;
};

const INSTRUCTIONS =
  'Drives Android phones paired with this svc relay (Device Control). Every call passes the relay’s safety pipeline: ' +
  'blocklisted apps (banking, payments, passwords, 2FA) are refused, destructive actions (send, pay, delete, calls, SMS) ' +
  'are confirmed by the phone’s user, and Device Control switches itself off when idle. A refusal comes back as a tool ' +
  'error saying why; tell the user rather than retrying. Start with android_ping, then android_read_screen. ' +
  'A password or PIN the user registered on the relay is typed with android_type_secret by its name (you never see it); ' +
  'when only the user can go on (a login, a CAPTCHA), android_hand_over asks them to take over and waits.';

/** The MCP client's name for itself as the record keeps it: printable, at most 64 characters. */
export function clientName(raw: unknown): string {
  const s = typeof raw === 'string' ? raw.replace(/[^\w .@+:/()-]+/g, '_').trim() : '';
  return s.slice(0, 64) || 'unnamed';
}

/**
 * One MCP session's server (the SDK's low-level Server, so input schemas come from our DTOs rather than
 * zod): `tools/list`, `tools/call` into BridgeService.command (the HTTP routes' path: the same pipeline,
 * the same events, marked `via: mcp` with the client's name), and the two read-only resources. The SDK is
 * loaded by the first session, not at the relay's start (it costs about 350 ms to load).
 */
export function mcpServer(deps: McpDeps, driver: Driver): McpServer {
  const { Server } = require('@modelcontextprotocol/sdk/server/index.js') as typeof import('@modelcontextprotocol/sdk/server/index.js');
  const t = require('@modelcontextprotocol/sdk/types.js') as typeof SdkTypes;
  const server = new Server({ name: 'svc-relay', version: deps.version }, { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS });
  /** This session's last screenshot per phone: the space its gestures' coordinates are in. */
  const spaces = new ImageSpaces();
  /** The session's name in the log (CommandOrigin `session`): made here, never its Mcp-Session-Id. */
  const session = randomBytes(6).toString('hex');
  server.setRequestHandler(t.ListToolsRequestSchema, () => ({ tools: deps.tools.list() }));
  server.setRequestHandler(t.CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const tool = deps.tools.get(req.params.name);
    if (!tool) return { isError: true, content: [{ type: 'text', text: `unknown tool ${req.params.name}: tools/list names them` }] };
    try {
      const input = deps.tools.read(tool, req.params.arguments);
      if (!input.ok) throw input.error;
      const from: CommandFrom = { origin: { via: 'mcp', client: clientName(server.getClientVersion()?.name), session } };
      if (server.getClientCapabilities()?.elicitation) from.ask = asker(server, extra.requestId);
      return await run(tool, input.value as Record<string, unknown>, from, extra.signal);
    } catch (err) {
      const refused = errorResult(err);
      if (refused) return refused;
      deps.logger.error({ err: (err as Error).message, tool: tool.name }, 'MCP tool call failed');
      return { isError: true, content: [{ type: 'text', text: 'the relay failed to run this tool (see its log)' }] };
    }
  });
  /** One tool call: its gesture coordinates in the phone's pixels, the relay's own fields taken off, a screenshot scaled. */
  async function run(tool: ToolEntry, value: Record<string, unknown>, from: CommandFrom, signal: AbortSignal): Promise<CallToolResult> {
    if (tool.human) return runHumanTool(deps, driver, tool.human, value, from, signal);
    const byElement = await elementCall(tool, value, { bridge: deps.bridge, clock: deps.clock, limits: deps.elements, driver, from, signal });
    if (byElement) return byElement;
    const phone = () => pickDevice(deps.loop.models, { selector: pickSelector(value), driver }, deps.clock.now()).tokenPrefix;
    let input = Object.fromEntries(Object.entries(value).filter(([k]) => !(MCP_ONLY as readonly string[]).includes(k)));
    if (isGesture(tool.method, tool.path) && value.coordinates !== 'phone') input = spaces.toPhone(phone(), input);
    const [query, body] = tool.method === 'GET' ? [input, {}] : [{}, input];
    const reply = await deps.bridge.command(driver, tool.method, tool.path, query, body, from);
    if (tool.shape !== 'screenshot' || reply.status >= 300) return toolResult(tool.shape, reply);
    return screenshotResult(reply.body, screenRequest(value, deps.screenshotMaxSide), spaces, phone());
  }
  server.setRequestHandler(t.ListResourcesRequestSchema, () => ({ resources: [...RESOURCES] }));
  server.setRequestHandler(t.ReadResourceRequestSchema, (req) => {
    const m = deps.loop.models;
    const online = (prefix: string) => {
      const d = m.bridge.device(prefix);
      return !!d && deps.bridge.isOnline(d);
    };
    try {
      return readResource(req.params.uri, m, online, driver, deps.clock.now());
    } catch (err) {
      throw new t.McpError(t.ErrorCode.InvalidParams, (err as Error).message);
    }
  });
  return server;
}

/** Asks the client's user through elicitation, on the tool call's own stream: yes, no, or dismissed. */
function asker(server: McpServer, requestId: string | number): AskAgent {
  return async (q, signal): Promise<AgentAnswer> => {
    const r = await server.elicitInput(
      {
        mode: 'form',
        message:
          `The agent asks to ${q.path.slice(1).replace(/_/g, ' ')} on the phone "${q.deviceName}"` +
          (q.text === q.verb ? ', a destructive action.' : `: "${q.text}" holds the destructive action "${q.verb}".`) +
          ' Allow it? The phone will ask its user too.',
        requestedSchema: {
          type: 'object',
          properties: {
            allow: { type: 'boolean', title: `Allow "${q.verb}"`, description: 'Yes lets the phone ask its user next; no refuses it here.' },
          },
          required: ['allow'],
        },
      },
      { relatedRequestId: requestId, signal, timeout: q.timeoutMs },
    );
    if (r.action === 'accept') return r.content?.allow === true ? 'allow' : 'deny';
    return r.action === 'decline' ? 'deny' : 'dismiss';
  };
}
