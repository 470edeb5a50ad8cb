import { eventAtMs } from '../event-time';
import { isoMs } from '../epoch';
import type { DeepReadonly } from '../deep-readonly';
import type { Projection, StoredEvent, StoredRelayEvent, VoiceSection, VoiceSessionKind, VoiceSettingValue, VoiceVia } from '@svc/events';

type MutableVoiceSession = {
  sessionId: string;
  kind: VoiceSessionKind;
  profile: string | null;
  provider: string;
  via: VoiceVia;
  actor: string;
  createdAt: number;
  /** The connect window (60 s after creation) or, while `detached`, the end of the resume grace. */
  expiresAt: number;
  /** Its socket dropped and it waits for a resume (absent in snapshots written before resume existed). */
  detached?: boolean;
};

/** An open voice session, read-only outside this projection. */
export type VoiceSession = DeepReadonly<MutableVoiceSession>;

type MutableVoiceCounters = { transcriptions: number; syntheses: number; failures: number; lastAt: number | null };
export type VoiceCounters = Readonly<MutableVoiceCounters>;

type State = {
  relaySettings: Partial<Record<VoiceSection, Record<string, VoiceSettingValue>>>;
  allowInsecureApiBearer: boolean;
  sessions: MutableVoiceSession[];
  counters: MutableVoiceCounters;
};

/**
 * Relay voice: the relay-owned settings (the defaults a PATCH without a profile writes; they outlive a
 * restart), the runtime security toggle (reset at `relay.started` to what the process started with),
 * the open voice sessions (ephemeral; a dropped one held for a resume is `detached` until its grace ends)
 * and counters for the console.
 */
export class VoiceProjection implements Projection<State> {
  private relaySettings: State['relaySettings'] = {};
  private allowInsecure = false;
  private readonly sessions = new Map<string, MutableVoiceSession>();
  private counters: MutableVoiceCounters = { transcriptions: 0, syntheses: 0, failures: 0, lastAt: null };

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'relay.started':
        this.allowInsecure = e.data.allowInsecureApiBearer === true;
        this.sessions.clear();
        break;
      case 'relay.security_changed':
        this.allowInsecure = e.data.allowInsecureApiBearer;
        break;
      case 'voice.settings_changed':
        if (e.data.scope === 'relay') this.relaySettings[e.data.section] = { ...this.relaySettings[e.data.section], ...e.data.changed };
        break;
      case 'voice.transcribed':
      case 'voice.synthesized':
        if (e.type === 'voice.transcribed') this.counters.transcriptions++;
        else this.counters.syntheses++;
        if (e.data.outcome !== 'ok') this.counters.failures++;
        this.counters.lastAt = eventAtMs(e);
        break;
      case 'voice.session_created':
        this.sessions.set(e.data.sessionId, {
          sessionId: e.data.sessionId,
          kind: e.data.kind,
          profile: e.data.profile,
          provider: e.data.provider,
          via: e.data.via,
          actor: e.actor,
          createdAt: eventAtMs(e),
          expiresAt: isoMs(e.data.expiresAt),
        });
        break;
      case 'voice.session_detached': {
        const s = this.sessions.get(e.data.sessionId);
        if (s) this.sessions.set(s.sessionId, { ...s, detached: true, expiresAt: isoMs(e.data.resumeUntil) });
        break;
      }
      case 'voice.session_resumed': {
        const s = this.sessions.get(e.data.sessionId);
        if (s) this.sessions.set(s.sessionId, { ...s, detached: false });
        break;
      }
      case 'voice.session_ended':
        this.sessions.delete(e.data.sessionId);
        break;
      default:
        break;
    }
  }

  get allowInsecureApiBearer(): boolean {
    return this.allowInsecure;
  }

  /** The relay-owned values of a section (what PATCHes without a profile wrote), never undefined. */
  settings(section: VoiceSection): Readonly<Record<string, VoiceSettingValue>> {
    return { ...this.relaySettings[section] };
  }

  session(id: string): VoiceSession | undefined {
    return this.sessions.get(id);
  }

  openSessions(): readonly VoiceSession[] {
    return [...this.sessions.values()];
  }

  stats(): VoiceCounters {
    return { ...this.counters };
  }

  snapshot(): State {
    return {
      relaySettings: structuredClone(this.relaySettings),
      allowInsecureApiBearer: this.allowInsecure,
      sessions: [...this.sessions.values()],
      counters: { ...this.counters },
    };
  }

  restore(state: State): void {
    this.relaySettings = structuredClone(state.relaySettings ?? {});
    this.allowInsecure = state.allowInsecureApiBearer === true;
    this.sessions.clear();
    for (const s of state.sessions ?? []) this.sessions.set(s.sessionId, { ...s });
    this.counters = { ...{ transcriptions: 0, syntheses: 0, failures: 0, lastAt: null }, ...state.counters };
  }
}
