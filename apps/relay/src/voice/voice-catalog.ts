import type { VoiceSection } from '@svc/events';
import type { ProviderCapabilities, ProviderOptions, VoiceProvider } from './voice-provider';

/**
 * A provider as the app's settings screens decode it (`RealtimeProviderInfo`, RelayVoiceClient.kt
 * 3180-3205: `id` required, lists of strings, label maps, `supports_*` flags). Filled only with what this
 * relay can say truthfully: its own providers, their option lists, whether they can serve now, and what
 * this relay does with each (not what the vendor's API could do elsewhere).
 */
export type ProviderInfo = {
  id: string;
  name: string;
  status: 'available' | 'unavailable';
  description: string;
  models: string[];
  voices: string[];
  languages: string[];
  sample_rates: number[];
  model_labels: Record<string, string>;
  voice_labels: Record<string, string>;
  requires_manual_id: boolean;
} & ProviderCapabilities;

/** `o`: the provider's options for `section`. */
export function providerInfo(section: VoiceSection, provider: VoiceProvider, o: ProviderOptions): ProviderInfo {
  const why = provider.unavailable();
  return {
    id: provider.id,
    name: provider.label,
    status: why === null ? 'available' : 'unavailable',
    description: why ?? `${provider.label}: ${section === 'voice_output' ? 'speech output' : 'realtime voice'} through this relay`,
    models: o.models,
    voices: o.voices.map((v) => v.id),
    languages: o.languages,
    sample_rates: o.sample_rates,
    model_labels: {},
    voice_labels: Object.fromEntries(o.voices.filter((v) => v.label !== v.id).map((v) => [v.id, v.label])),
    // The offline provider takes any espeak-ng voice name, listed or not.
    requires_manual_id: false,
    ...provider.capabilities,
  };
}
