import { isBlocked, screenHashOf, takesEvidence, type BridgeDevice, type EvidenceMode, type ReadModels } from '@svc/domain';
import type { CommandFrom } from './agent-confirmations';
import type { CommandReply } from './in-flight-commands';

/** The phone a hash is asked of: the socket a command went to. */
export type EvidencePhone = Pick<BridgeDevice, 'tokenPrefix' | 'connId'>;

/** Sends the relay's own `GET /screen_hash` to the phone (no event, no evidence of its own), bounded by `timeoutMs`. */
export type AskHash = (phone: EvidencePhone, timeoutMs: number) => Promise<CommandReply>;

/** The longest a hash may hold a command up (the setting RELAY_BRIDGE_COMMAND_TIMEOUT_MS may be shorter). */
export const EVIDENCE_TIMEOUT_MS = 2000;

/**
 * Evidence per action (issue 40, item 6): the screen's hash just before a screen-changing command goes to
 * the phone and just after it answers, asked of the phone's own `/screen_hash`. A phone that cannot answer
 * (an app without the route, Device Control off, a timeout) gives null: evidence never fails a command; so does
 * a blocklisted app in the foreground, whose screen the relay reads in no form (safety.ts, the foreground gate).
 */
export class ScreenEvidence {
  constructor(
    readonly mode: EvidenceMode,
    private readonly timeoutMs: number,
    private readonly ask: AskHash,
    /** The read models and blocklist: no hash is asked while a blocklisted app is in front (as no read is). */
    private readonly safety: { models: ReadModels; blocklist: readonly string[] },
  ) {}

  /**
   * Never for a named secret's typing: the screen's hash after it covers the field's text, and a short secret
   * (a PIN) could be found by hashing guesses against the rest of a known screen.
   */
  wanted(method: string, path: string, from?: CommandFrom): boolean {
    return !from?.secret && takesEvidence(this.mode, method, path, from?.origin.via === 'mcp');
  }

  async hash(phone: EvidencePhone): Promise<string | null> {
    const app = this.safety.models.bridge.device(phone.tokenPrefix)?.currentApp;
    if (app && isBlocked(app, this.safety.blocklist)) return null;
    try {
      const r = await this.ask(phone, Math.min(this.timeoutMs, EVIDENCE_TIMEOUT_MS));
      return screenHashOf(r.status, r.body);
    } catch {
      return null;
    }
  }
}
