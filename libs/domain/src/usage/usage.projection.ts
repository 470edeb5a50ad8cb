import type { Projection, StoredEvent, StoredRelayEvent, VoiceSessionKind } from '@svc/events';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';

type MutableProviderUsage = {
  provider: string;
  profile: string | null;
  transcriptions: number;
  syntheses: number;
  sessions: number;
  failures: number;
  /** Characters synthesized or transcribed (never the text). */
  characters: number;
  /** Audio bytes uploaded for transcription, produced by synthesis or streamed in sessions. */
  audioBytes: number;
  /** Audio length transcribed (when the relay could decode it). */
  audioMs: number;
  firstUsedAt: number;
  lastUsedAt: number;
};

/** What the relay used one provider for, in one profile (null: the global config); read-only outside this projection. */
export type ProviderUsage = DeepReadonly<MutableProviderUsage>;

type SessionRef = { provider: string; profile: string | null; chatSessionId: string | null; kind: VoiceSessionKind };
type State = {
  since: number | null;
  rows: MutableProviderUsage[];
  sessions: Array<[string, SessionRef]>;
  byChat: Array<[string, MutableProviderUsage[]]>;
};

/**
 * Provider usage (spec 4.8): what the relay itself asked of each speech provider, per profile, from the
 * voice events since the log began: calls, failures, characters, audio. Per chat session too, for the
 * realtime agent's sessions bound to one (`session_id` scope). Durable: it is the log's own account.
 */
export class UsageProjection implements Projection<State> {
  private readonly rows = new Map<string, MutableProviderUsage>();
  /** Voice sessions by id, until they end (their totals arrive with `voice.session_ended`). */
  private readonly sessions = new Map<string, SessionRef>();
  private readonly byChat = new Map<string, Map<string, MutableProviderUsage>>();
  private firstAt: number | null = null;

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    this.firstAt ??= eventAtMs(e);
    switch (e.type) {
      case 'voice.transcribed':
      case 'voice.synthesized': {
        const r = this.row(this.rows, e.data.provider, e.data.profile, eventAtMs(e));
        if (e.type === 'voice.transcribed') {
          r.transcriptions++;
          r.audioMs += e.data.audioMs ?? 0;
        } else r.syntheses++;
        if (e.data.outcome !== 'ok') r.failures++;
        r.characters += e.data.chars;
        r.audioBytes += e.data.bytes;
        break;
      }
      case 'voice.session_created':
        this.sessions.set(e.data.sessionId, {
          provider: e.data.provider,
          profile: e.data.profile,
          chatSessionId: e.data.chatSessionId ?? null,
          kind: e.data.kind,
        });
        break;
      case 'voice.session_ended': {
        const s = this.sessions.get(e.data.sessionId);
        if (!s) break;
        this.sessions.delete(e.data.sessionId);
        const at = eventAtMs(e);
        const targets = [this.row(this.rows, s.provider, s.profile, at)];
        if (s.chatSessionId) {
          let m = this.byChat.get(s.chatSessionId);
          if (!m) this.byChat.set(s.chatSessionId, (m = new Map()));
          targets.push(this.row(m, s.provider, s.profile, at));
        }
        for (const r of targets) {
          r.sessions++;
          r.characters += e.data.chars;
          r.audioBytes += e.data.bytes;
        }
        break;
      }
      case 'relay.started':
        // Sessions do not survive a restart; their totals never arrive.
        this.sessions.clear();
        break;
      default:
        break;
    }
  }

  private row(map: Map<string, MutableProviderUsage>, provider: string, profile: string | null, at: number): MutableProviderUsage {
    const key = `${provider}\u0000${profile ?? ''}`;
    let r = map.get(key);
    if (!r) {
      r = {
        provider,
        profile,
        transcriptions: 0,
        syntheses: 0,
        sessions: 0,
        failures: 0,
        characters: 0,
        audioBytes: 0,
        audioMs: 0,
        firstUsedAt: at,
        lastUsedAt: at,
      };
      map.set(key, r);
    }
    r.lastUsedAt = at;
    return r;
  }

  /** When the log this account comes from began (its first event). */
  get since(): number | null {
    return this.firstAt;
  }

  /** Every provider x profile row, or those of one profile / one chat session. */
  usage(scope: { profile?: string | null; chatSessionId?: string | null } = {}): readonly ProviderUsage[] {
    const source = scope.chatSessionId ? [...(this.byChat.get(scope.chatSessionId)?.values() ?? [])] : [...this.rows.values()];
    const rows = scope.profile ? source.filter((r) => (r.profile ?? 'default') === scope.profile) : source;
    return rows.sort((a, b) => a.provider.localeCompare(b.provider) || (a.profile ?? '').localeCompare(b.profile ?? ''));
  }

  snapshot(): State {
    return {
      since: this.firstAt,
      rows: [...this.rows.values()],
      sessions: [...this.sessions],
      byChat: [...this.byChat].map(([k, m]) => [k, [...m.values()]]),
    };
  }

  restore(s: State): void {
    this.firstAt = s.since ?? null;
    this.rows.clear();
    for (const r of s.rows ?? []) this.rows.set(`${r.provider}\u0000${r.profile ?? ''}`, r);
    this.sessions.clear();
    for (const [k, v] of s.sessions ?? []) this.sessions.set(k, v);
    this.byChat.clear();
    for (const [k, rows] of s.byChat ?? []) this.byChat.set(k, new Map(rows.map((r) => [`${r.provider}\u0000${r.profile ?? ''}`, r])));
  }
}
