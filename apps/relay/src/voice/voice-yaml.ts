import type { VoiceSection, VoiceSettingValue } from '@svc/events';
import type { YamlMap } from '../common/agent-config/config-yaml-parse';

/**
 * Values read out of a config.yaml, whatever the operator typed: a string is trimmed (blank is none), a
 * whole number may be written as digits, a flag is a YAML boolean. The voice sections name a provider and
 * may hold that provider's own block (`tts: {provider: openai, openai: {voice: alloy}}`).
 */
export const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
export const int = (v: unknown): number | null =>
  typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null;
export const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

const isMap = (v: unknown): v is YamlMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A section's settings with the selected provider's own block merged in (`tts: {provider: openai, openai: {voice: ...}}`). */
export function selectedProviderConfig(data: YamlMap, section: string): YamlMap {
  const s = data[section];
  if (!isMap(s)) return {};
  const provider = typeof s.provider === 'string' && s.provider.trim() !== '' ? s.provider.trim() : null;
  const selected = provider ? s[provider] : undefined;
  const out: YamlMap = isMap(selected) ? { ...selected } : {};
  for (const [k, v] of Object.entries(s)) {
    if (k === provider || isMap(v)) continue;
    if (v !== null && v !== '') out[k] = v;
  }
  if (provider) out.provider = provider;
  return out;
}

/** A profile's overrides of a settings section (`voice_output` falls back to its `tts` section's provider/model/voice). */
export function profileOverrides(data: YamlMap, section: VoiceSection): Record<string, VoiceSettingValue> {
  let s = selectedProviderConfig(data, section);
  const fromTts = Object.keys(s).length === 0 && section === 'voice_output';
  if (fromTts) s = selectedProviderConfig(data, 'tts');
  const out: Record<string, VoiceSettingValue> = {};
  const provider = str(s.provider);
  if (provider) out.provider = provider;
  const model = str(s.model) ?? str(s.model_id);
  if (model) out.model = model;
  const voice = str(s.voice) ?? str(s.voice_id);
  if (voice) out.voice = voice;
  const rate = int(s.sample_rate);
  if (rate !== null) out.sample_rate = rate;
  if (!fromTts) {
    for (const k of ['language', 'codec', 'fallback_engine']) if (str(s[k])) out[k] = str(s[k]);
    for (const k of ['optimize_streaming_latency']) if (int(s[k]) !== null) out[k] = int(s[k]);
    for (const k of ['enabled', 'text_normalization', 'auto_speech_tags', 'fallback_enabled']) if (bool(s[k]) !== null) out[k] = bool(s[k]);
  }
  return out;
}
