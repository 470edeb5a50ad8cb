import type { ProviderUsage, ReadModels } from '@svc/domain';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * `GET /usage/providers`: per provider (every one the relay knows, and every one the log names), whether
 * it can serve and why not, its totals, and its rows per profile, within the scope asked.
 */
export function providerUsageView(
  models: ReadModels,
  providerStates: ReadonlyArray<{ provider: string; unavailable: string | null }>,
  scope: { profile: string | null; sessionId: string | null },
) {
  const rows = models.usage.usage({ profile: scope.profile, chatSessionId: scope.sessionId });
  const states = new Map(providerStates.map((s) => [s.provider, s.unavailable]));
  const providers = [...new Set([...states.keys(), ...rows.map((r) => r.provider)])].sort();
  return {
    ok: true,
    scope: { profile: scope.profile, session_id: scope.sessionId },
    source: 'relay_event_log',
    since: models.usage.since === null ? null : iso(models.usage.since),
    providers: providers.map((provider) => {
      const mine = rows.filter((r) => r.provider === provider);
      const why = states.has(provider) ? states.get(provider)! : 'not configured in this relay';
      return {
        provider,
        kind: 'speech',
        available: why === null,
        ...(why ? { unavailable_reason: why } : {}),
        totals: total(mine),
        by_profile: mine.map((r) => ({ profile: r.profile ?? 'default', ...view(r) })),
      };
    }),
  };
}

function view(r: ProviderUsage) {
  return {
    transcriptions: r.transcriptions,
    syntheses: r.syntheses,
    sessions: r.sessions,
    failures: r.failures,
    characters: r.characters,
    audio_bytes: r.audioBytes,
    audio_seconds: Math.round(r.audioMs / 100) / 10,
    first_used_at: iso(r.firstUsedAt),
    last_used_at: iso(r.lastUsedAt),
  };
}

function total(rows: ProviderUsage[]) {
  const sum = (f: (r: ProviderUsage) => number) => rows.reduce((n, r) => n + f(r), 0);
  return {
    transcriptions: sum((r) => r.transcriptions),
    syntheses: sum((r) => r.syntheses),
    sessions: sum((r) => r.sessions),
    failures: sum((r) => r.failures),
    characters: sum((r) => r.characters),
    audio_bytes: sum((r) => r.audioBytes),
    audio_seconds: Math.round(sum((r) => r.audioMs) / 100) / 10,
    last_used_at: rows.length ? iso(Math.max(...rows.map((r) => r.lastUsedAt))) : null,
  };
}
