import { scrubSecret } from '@svc/domain';
import type { CommandFrom } from './agent-confirmations';
import type { SentCommand } from './in-flight-commands';

/**
 * A secret's command: its value taken out of the phone's answer before anything reads it (the app's refusal
 * quotes the text it inspected: BridgeCommandHandler.kt:654-658), so neither the record nor the agent gets it.
 */
export function secretScrubber(from?: CommandFrom): SentCommand['scrub'] {
  const s = from?.secret;
  if (!s) return undefined;
  return (body) => scrubSecret(body, s.value, s.name) as Record<string, unknown>;
}
