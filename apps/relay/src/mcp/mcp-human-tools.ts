import { HAND_OVER_MESSAGE_MAX, HAND_OVER_TIMEOUT_DEFAULT, HAND_OVER_TIMEOUT_MAX, SECRET_NAME_MAX, secretToType, type Driver } from '@svc/domain';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { IsBoolean, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from '../common/http/validators';
import { SelectorBody } from '../bridge/device-control.dto';
import type { CommandFrom } from '../bridge/agent-confirmations';
import type { BridgeService } from '../bridge/bridge.service';
import { handOver } from '../bridge/hand-over';
import { pickSelector } from '../bridge/device-selector';
import type { Clock } from '../common/loop/clock';
import type { PhoneThreadsService } from '../threads/threads.service';
import type { CommandLoop } from '../common/loop/command-loop';
import { toolResult } from './mcp-results';
import type { ToolRoute } from './mcp-tools';

/*
 * The two tools that are no Device Control route (issue 40, items 3 and 5): typing a named secret the agent
 * never sees, and handing the phone over to its user. Each runs through the bridge's own pipeline.
 */

export class TypeSecretToolInput extends SelectorBody {
  @IsString()
  @MaxLength(SECRET_NAME_MAX)
  @Matches(/^[A-Za-z0-9_-]+$/, { message: `name is a secret's name: 1 to ${SECRET_NAME_MAX} letters, digits, _ or -` })
  name!: string;

  @IsOptional()
  @IsBoolean()
  clearFirst?: boolean;
}

export class HandOverToolInput extends SelectorBody {
  @IsString()
  @MaxLength(HAND_OVER_MESSAGE_MAX)
  message!: string;

  @IsOptional()
  @IsInt({ message: `timeout_s must be a whole number of seconds from 1 to ${HAND_OVER_TIMEOUT_MAX}` })
  @Min(1)
  @Max(HAND_OVER_TIMEOUT_MAX)
  timeout_s?: number;
}

export type HumanTool = 'type_secret' | 'hand_over';

const DEVICE = ' Optional `device` (a device_id, token prefix of 4+ characters, or device name) picks the phone.';

/** Appended to the route tools' listing (mcp-tool-set.ts). */
export const HUMAN_TOOLS: ReadonlyArray<ToolRoute & { human: HumanTool; input: typeof TypeSecretToolInput | typeof HandOverToolInput }> = [
  {
    name: 'android_type_secret',
    method: 'POST',
    path: '/type',
    shape: 'json',
    human: 'type_secret',
    input: TypeSecretToolInput,
    description:
      'Type a secret the operator registered on the relay (a password, a PIN) into the focused field, by its name: the relay puts the value in, and neither this result nor the record ever shows it to you. clearFirst replaces what is there. The same rules as android_type apply (blocklisted apps are refused; a value holding a destructive word is confirmed with the user, who is shown the secret’s name). Unknown or forgotten names are refused: ask the user to register it.' +
      DEVICE,
  },
  {
    name: 'android_hand_over',
    method: 'POST',
    path: '/hand_over',
    shape: 'json',
    human: 'hand_over',
    input: HandOverToolInput,
    description: `Hand the phone over to its user (a login, a CAPTCHA, a choice only they can make): the phone asks them to take over with your message (a prompt with Allow and Deny, or on the Android app a Threads message they reply "done" or "no" to), and this call waits up to timeout_s seconds (default ${HAND_OVER_TIMEOUT_DEFAULT}, at most ${HAND_OVER_TIMEOUT_MAX}) for the answer: done, declined or timed_out; a reply in other words is "done" with their words as note. Read the screen again after "done".${DEVICE}`,
  },
];

/** android_hand_over's outputSchema: the user's answer, or a refusal (`ok: false`, as SCREENSHOT_OUTPUT allows). */
export const HAND_OVER_OUTPUT = {
  type: 'object' as const,
  properties: {
    answer: { type: 'string', enum: ['done', 'declined', 'timed_out', 'phone_gone'] },
    device: { type: 'string', description: 'the phone’s name' },
    via: { type: 'string', enum: ['confirm', 'thread'], description: 'how the phone asked: its confirmation prompt, or a Threads message' },
    note: { type: 'string', description: 'the user’s own words, when their Threads reply was neither done nor no' },
    ok: { type: 'boolean' },
  },
  anyOf: [{ required: ['answer', 'device'] }, { required: ['ok'], properties: { ok: { const: false } } }],
};

export const HUMAN_ANNOTATIONS = {
  type_secret: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  hand_over: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
} as const;

type Deps = { bridge: BridgeService; loop: CommandLoop; clock: Clock; threads: PhoneThreadsService };

export async function runHumanTool(
  deps: Deps,
  driver: Driver,
  human: HumanTool,
  v: Record<string, unknown>,
  from: CommandFrom,
  signal?: AbortSignal,
): Promise<CallToolResult> {
  const selector = pickSelector(v) ?? undefined;
  if (human === 'hand_over') {
    const timeoutSeconds = typeof v.timeout_s === 'number' ? v.timeout_s : HAND_OVER_TIMEOUT_DEFAULT;
    const r = await handOver(deps, driver, { message: String(v.message), timeoutSeconds, selector, origin: from.origin, signal });
    const out = { answer: r.answer, device: r.device, via: r.via, ...(r.note ? { note: r.note } : {}) };
    return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
  }
  const name = String(v.name);
  const value = secretToType(deps.loop.models, name);
  const body = { text: value, ...(v.clearFirst !== undefined ? { clearFirst: v.clearFirst } : {}), ...(selector ? { device: selector } : {}) };
  const reply = await deps.bridge.command(driver, 'POST', '/type', {}, body, { ...from, secret: { name, value } });
  // The phone's answer is already scrubbed of the value (bridge.service onResponse); on success only the name is said.
  if (reply.status >= 300) return toolResult('json', reply);
  return { content: [{ type: 'text', text: JSON.stringify({ ok: true, typed: `the secret "${name}"` }) }] };
}
