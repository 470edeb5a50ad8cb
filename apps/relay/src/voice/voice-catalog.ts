import type { VoiceSection } from '@svc/events';
import type { ProviderOptions, VoiceProvider } from './voice-provider';

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
  supports_tts: boolean;
  supports_stt: boolean;
  supports_speech_to_speech: boolean;
  supports_tool_use: boolean;
  supports_realtime: boolean;
  supports_realtime_agent_native: boolean;
  supports_interruption: boolean;
  supports_expression: boolean;
};

/** The openai provider's models for a realtime section when discovery found none of them. */
const REALTIME_MODELS = ['gpt-4o-realtime-preview', 'gpt-4o-mini-realtime-preview', 'gpt-realtime'];
const isRealtimeModel = (m: string) => /realtime/i.test(m);

/**
 * A provider's options for one section: the openai provider's speech models for voice output, its realtime
 * models for the realtime sections (the session's model is a realtime one there); the offline provider's
 * one engine everywhere.
 */
export function sectionOptions(section: VoiceSection, o: ProviderOptions): ProviderOptions {
  if (o.provider !== 'openai') return o;
  const realtime = section !== 'voice_output';
  const models = o.models.filter((m) => isRealtimeModel(m) === realtime);
  return { ...o, models: models.length > 0 ? models : realtime ? REALTIME_MODELS : o.models.filter((m) => !isRealtimeModel(m)) };
}

/** What this relay does with each provider (voice.service, voice-sessions.service, native-agent). */
const CAPABILITIES: Record<
  string,
  Omit<
    ProviderInfo,
    | 'id'
    | 'name'
    | 'status'
    | 'description'
    | 'models'
    | 'voices'
    | 'languages'
    | 'sample_rates'
    | 'model_labels'
    | 'voice_labels'
    | 'requires_manual_id'
  >
> = {
  // espeak-ng speaks, pocketsphinx transcribes; a realtime session takes typed text (its mic audio is
  // acknowledged, not heard); the realtime agent runs the fallback engine. response.cancel stops speech.
  offline: {
    supports_tts: true,
    supports_stt: true,
    supports_speech_to_speech: false,
    supports_tool_use: false,
    supports_realtime: true,
    supports_realtime_agent_native: false,
    supports_interruption: true,
    supports_expression: false,
  },
  // The provider's realtime socket hears the mic and speaks; the realtime agent declares the narrow tool surface.
  openai: {
    supports_tts: true,
    supports_stt: true,
    supports_speech_to_speech: true,
    supports_tool_use: true,
    supports_realtime: true,
    supports_realtime_agent_native: true,
    supports_interruption: true,
    supports_expression: false,
  },
};

export function providerInfo(section: VoiceSection, provider: VoiceProvider, options: ProviderOptions): ProviderInfo {
  const o = sectionOptions(section, options);
  const why = provider.unavailable();
  const caps = CAPABILITIES[provider.id] ?? CAPABILITIES.offline;
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
    ...caps,
  };
}
