import type { ClientNames } from '@svc/domain';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Type } from '@nestjs/common';
import { DtoJsonSchemas } from '../common/http/dto-json-schema';
import { parseFrame, type ParsedFrame } from '../common/sockets/parse-frame';
import { DEVICE_CONTROL_RULE_SCHEMAS } from '../bridge/device-control-schemas';
import { deviceControlInput } from '../bridge/device-control.controller';
import { NAMED_INPUTS, TOOL_INPUTS } from './mcp-inputs.dto';
import { annotationsOf, toolRoutes, type ResultShape, type ToolRoute } from './mcp-tools';
import { SCREENSHOT_OUTPUT } from './mcp-screenshot';
import { TREE_OUTPUT } from './element-text';
import { WAIT_OUTPUT } from './mcp-wait';
import { HAND_OVER_OUTPUT, HUMAN_ANNOTATIONS, HUMAN_TOOLS, type HumanTool } from './mcp-human-tools';

export type ToolEntry = ToolRoute & { input: Type<object>; human?: HumanTool };

const OUTPUTS: Partial<Record<ResultShape, Tool['outputSchema']>> = { screenshot: SCREENSHOT_OUTPUT, tree: TREE_OUTPUT, wait: WAIT_OUTPUT };

/**
 * The MCP tools of one relay: each Device Control route (mcp-tools.ts) with the DTO its HTTP route reads
 * its input into (or the MCP input that extends it: mcp-inputs.dto.ts), and the listing an MCP client gets, whose input schemas are generated from those DTOs.
 * The listing is built once, on the first `tools/list`.
 */
export class McpToolSet {
  private readonly byName: ReadonlyMap<string, ToolEntry>;
  private listing: Tool[] | null = null;
  private readonly empty = new Map<Type<object>, ParsedFrame<object>>();

  constructor(
    names: ClientNames,
    private readonly schemas = new DtoJsonSchemas(DEVICE_CONTROL_RULE_SCHEMAS),
  ) {
    this.byName = new Map([
      ...toolRoutes(names).map((t): [string, ToolEntry] => [
        t.name,
        { ...t, input: NAMED_INPUTS[t.name] ?? TOOL_INPUTS[`${t.method} ${t.path}`] ?? deviceControlInput(t.method, t.path) },
      ]),
      ...HUMAN_TOOLS.map((t): [string, ToolEntry] => [t.name, t]),
    ]);
  }

  get(name: string): ToolEntry | undefined {
    return this.byName.get(name);
  }

  /**
   * A call's arguments read into its route's DTO, as the HTTP pipe reads a body (parseFrame). No arguments
   * at all (most reads) give the same outcome every time, since the DTOs depend on nothing but their input
   * (RelayValidationPipe caches `{}` the same way): checked once per tool, then a copy of that instance.
   */
  read(tool: ToolEntry, args: unknown): ParsedFrame<object> {
    const none = args === undefined || (typeof args === 'object' && args !== null && !Array.isArray(args) && Object.keys(args).length === 0);
    if (!none) return parseFrame(tool.input, args);
    let known = this.empty.get(tool.input);
    if (!known) this.empty.set(tool.input, (known = parseFrame(tool.input, {})));
    return known.ok ? { ok: true, value: Object.assign(Object.create(Object.getPrototypeOf(known.value) as object) as object, known.value) } : known;
  }

  list(): Tool[] {
    this.listing ??= [...this.byName.values()].map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: this.schemas.of(t.input) as Tool['inputSchema'],
      annotations: t.human ? HUMAN_ANNOTATIONS[t.human] : annotationsOf(t),
      // Only the screenshot's, the element tools' and the hand-over's answers are the relay's own: every other tool's data
      // is the phone's JSON, whose shape an app update may change, and a declared schema would turn that into the client's
      // validation error.
      ...(OUTPUTS[t.shape] ? { outputSchema: OUTPUTS[t.shape] } : {}),
      ...(t.human === 'hand_over' ? { outputSchema: HAND_OVER_OUTPUT } : {}),
    }));
    return this.listing;
  }
}
