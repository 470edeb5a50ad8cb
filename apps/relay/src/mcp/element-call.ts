import type { Driver } from '@svc/domain';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CommandFrom } from '../bridge/agent-confirmations';
import type { BridgeService } from '../bridge/bridge.service';
import type { Clock } from '../common/loop/clock';
import type { TreeLimits } from './element-text';
import { elementTree, type ElementTree } from './element-tree';
import { toolResult } from './mcp-results';

/* What an element tool call works with (mcp-elements.ts, mcp-wait.ts), and its one way of reading the screen. */

export type WaitLimits = {
  /** RELAY_MCP_WAIT_MAX_MS: the longest timeout_ms a call may ask. */
  waitMaxMs: number;
  /** RELAY_MCP_WAIT_MAX_POLLS: polls in one wait at most. */
  waitMaxPolls: number;
};

export type ElementLimits = TreeLimits & WaitLimits;

export type ElementCall = {
  bridge: BridgeService;
  clock: Clock;
  limits: ElementLimits;
  driver: Driver;
  from: CommandFrom;
  /** The MCP request's: aborted when the client cancels it. */
  signal: AbortSignal;
};

/** One `/screen` read (with bounds: refs need them) as a tree, or the refusal as the tool's answer. */
export async function readTree(
  value: Record<string, unknown>,
  c: ElementCall,
): Promise<{ ok: true; tree: ElementTree } | { ok: false; result: CallToolResult }> {
  const reply = await c.bridge.command(c.driver, 'GET', '/screen', { ...selectors(value), include_bounds: true }, {}, c.from);
  return reply.status >= 300 ? { ok: false, result: toolResult('json', reply) } : { ok: true, tree: elementTree(reply.body) };
}

/** The device selectors of a call, passed on to every command it makes. */
export function selectors(value: Record<string, unknown>): Record<string, unknown> {
  return pick(value, ['device', 'device_id']);
}

export function pick(value: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => value[k] !== undefined).map((k) => [k, value[k]]));
}
