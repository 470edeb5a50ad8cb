import { clientNames, type Spelling } from '@svc/domain';
import type { VoiceSection } from '@svc/events';
import { kindOfSection, type Kind } from './session-kinds';

/** The agent's frames the realtime-agent socket mirrors (the app matches `hermes.<name>` exactly: VoiceViewModel.kt 3623-3900). */
export type RunFrame =
  | 'run.started'
  | 'run.progress'
  | 'run.completed'
  | 'run.failed'
  | 'run.cancelled'
  | 'tool.started'
  | 'tool.completed'
  | 'tool.failed'
  | 'confirmation.forwarded'
  | 'result.respeak_unavailable';

/** The narrow tool surface of the provider-native engine, by what each does (named `<brand>_<suffix>`). */
export type AgentTool = 'run_task' | 'get_status' | 'cancel' | 'confirm';
const TOOL_SUFFIXES: readonly AgentTool[] = ['run_task', 'get_status', 'cancel', 'confirm'];

/**
 * Every brand-named thing the voice code writes, in the spelling the relay writes (RELAY_CLIENT_SPELLING,
 * WIRE.md "Spelling"): protocol ids, the agent's run/tool frames, the `source` of the agent's text, the
 * tool names given to the realtime model. What it reads (client frames, tool calls) is accepted in both.
 */
export class VoiceWire {
  readonly brand: Spelling;
  readonly tools: readonly string[];

  constructor(spelling: Spelling) {
    this.brand = clientNames(spelling).brand;
    this.tools = TOOL_SUFFIXES.map((t) => this.tool(t));
  }

  /** `svc.voice.output.v0` / `hermes.voice.output.v0` (the session's socket protocol). */
  protocol(kind: Kind): string {
    return `${this.brand}.voice.${kind}.v0`;
  }

  /** The protocol id of a section's options or validate answer (`hermes.voice.realtime.options.v0`). */
  answerProtocol(section: VoiceSection, what: 'options' | 'validate'): string {
    return `${this.brand}.voice.${kindOfSection(section)}.${what}.v0`;
  }

  sectionProtocol(section: VoiceSection): string {
    return this.protocol(kindOfSection(section));
  }

  frame(name: RunFrame): string {
    return `${this.brand}.${name}`;
  }

  tool(t: AgentTool): string {
    return `${this.brand}_${t}`;
  }

  /** A tool call's name in either spelling (`hermes_run_task`, `svc_run_task`), or null. */
  toolOf(name: string): AgentTool | null {
    for (const brand of ['svc', 'hermes'] as const)
      if (name.startsWith(`${brand}_`)) {
        const t = name.slice(brand.length + 1);
        if ((TOOL_SUFFIXES as readonly string[]).includes(t)) return t as AgentTool;
      }
    return null;
  }

  /** A client frame named `<brand>.<name>` in either spelling (the app sends `hermes.confirm`). */
  static isBranded(type: unknown, name: string): boolean {
    return type === `svc.${name}` || type === `hermes.${name}`;
  }

  /** How the realtime model is told whose voice it is. */
  get agentName(): string {
    return this.brand === 'hermes' ? 'Hermes' : 'svc';
  }
}
