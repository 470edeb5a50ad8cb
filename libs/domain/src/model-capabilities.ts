/**
 * Reasoning-effort capability rows (spec 2.5, `/relay/model-capabilities`). Pure: a static table of
 * provider adapters the relay knows exactly, and an advisory fallback for every other pair (every
 * canonical effort, `reasoning_efforts_exact: false`), so the client keeps its standard choices. It never
 * lists models of its own: one row per requested pair, in order.
 */
export const CANONICAL_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'ultra'] as const;

export type ModelCapabilityRow = {
  provider: string;
  model: string;
  reasoning: boolean;
  reasoning_efforts: string[];
  reasoning_efforts_exact: boolean;
  source: string;
};

const ALIASES: Record<string, string> = {
  github: 'copilot',
  'github-copilot': 'copilot',
  'github-models': 'copilot',
  'lm-studio': 'lmstudio',
  ollama: 'ollama-cloud',
};

type Cap = { efforts: readonly string[]; exact: boolean; source: string };

function adapter(provider: string, model: string): Cap | null {
  const p = ALIASES[provider] ?? provider;
  const m = model.split('/').pop() ?? model;
  const glm52 = ['glm-5.2', 'glm-5-2', 'glm-5p2'].some((t) => m.includes(t));
  if (p === 'zai' && glm52) return { efforts: ['none', 'high', 'max'], exact: true, source: 'provider-adapter' };
  const deepseekThinking = (m.startsWith('deepseek-v') && !m.startsWith('deepseek-v3')) || m === 'deepseek-reasoner';
  if ((p === 'deepseek' || p === 'opencode-go') && deepseekThinking)
    return { efforts: ['none', 'low', 'medium', 'high', 'max'], exact: true, source: 'provider-adapter' };
  if (p === 'opencode-go' && glm52) return { efforts: ['high', 'max'], exact: true, source: 'provider-adapter' };
  if (p === 'kimi-for-coding' || (p === 'opencode-go' && m.startsWith('kimi-k2')))
    return { efforts: ['none', 'low', 'medium', 'high'], exact: true, source: 'provider-adapter' };
  if (p === 'upstage') {
    if (m.includes('solar-mini') || m.includes('syn-pro')) return { efforts: [], exact: true, source: 'provider-adapter' };
    return { efforts: ['none', 'low', 'medium', 'high'], exact: true, source: 'provider-adapter' };
  }
  if (p === 'openai') {
    if (/^(gpt-4o|gpt-4\.1|gpt-4-|gpt-3\.5)/.test(m)) return { efforts: [], exact: true, source: 'provider-adapter' };
    if (/^gpt-5/.test(m)) return { efforts: ['minimal', 'low', 'medium', 'high'], exact: true, source: 'provider-adapter' };
    if (/^o[134](-|$)/.test(m)) return { efforts: ['low', 'medium', 'high'], exact: true, source: 'provider-adapter' };
  }
  return null;
}

/** One row per pair, in the order asked (provider and model echoed as the client sent them). */
export function modelCapabilities(pairs: ReadonlyArray<{ provider: string; model: string }>): ModelCapabilityRow[] {
  return pairs.map(({ provider, model }) => {
    const cap = adapter(provider.trim().toLowerCase(), model.trim().toLowerCase()) ?? {
      efforts: CANONICAL_EFFORTS,
      exact: false,
      source: 'canonical-fallback',
    };
    return {
      provider,
      model,
      reasoning: cap.efforts.length > 0,
      reasoning_efforts: [...cap.efforts],
      reasoning_efforts_exact: cap.exact,
      source: cap.source,
    };
  });
}
