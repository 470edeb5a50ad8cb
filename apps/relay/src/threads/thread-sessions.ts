import type { PhoneSession } from '../agent-store/agent-queries';

/** Store-only entries listed at most (the relay's own threads are all listed before them). */
export const MAX_STORE_ENTRIES = 1000;

type Counted = { messages: number; replies: number; queued: number; last_activity: number | null; last: unknown };
export type RelayThreadRow = Counted & { chat_id: string; title: string | null; sessionId: string | null };
export type ThreadRow = Counted & {
  session_id: string;
  chat_id: string;
  title: string | null;
  /** `relay`: a conversation this relay carried (its counts are real); `agent_store`: only a session → chat mapping. */
  source: 'relay' | 'agent_store';
  /** Who named `session_id`: the platform on a posted message, the agent's store, or nobody (`""`). */
  session_id_from: 'platform' | 'agent_store' | null;
};

/**
 * `/phone/threads` from the relay's threads and the agent store's phone sessions. First every relay thread,
 * in its order and with its counts; one the platform gave no session gets its chat's latest store session
 * (by last activity, else start). Then one `agent_store` entry per store session not already named above,
 * with zero counts, so the app can map every session to its chat while a client that counts conversations
 * counts `source: "relay"` entries only.
 */
export function threadRows(relay: RelayThreadRow[], store: PhoneSession[]): ThreadRow[] {
  const latest = new Map<string, PhoneSession>();
  for (const s of store) {
    const had = latest.get(s.chatId);
    if (!had || (s.lastActivity ?? -1) > (had.lastActivity ?? -1)) latest.set(s.chatId, s);
  }
  const rows: ThreadRow[] = relay.map(({ sessionId, ...t }) => {
    const fromStore = sessionId ? undefined : latest.get(t.chat_id);
    return {
      session_id: sessionId ?? fromStore?.sessionId ?? '',
      chat_id: t.chat_id,
      title: t.title,
      messages: t.messages,
      replies: t.replies,
      queued: t.queued,
      last_activity: t.last_activity,
      last: t.last,
      source: 'relay',
      session_id_from: sessionId ? 'platform' : fromStore ? 'agent_store' : null,
    };
  });
  const named = new Set(rows.map((r) => r.session_id).filter(Boolean));
  const extra = store
    .filter((s) => !named.has(s.sessionId))
    .sort((a, b) => (b.lastActivity ?? -1) - (a.lastActivity ?? -1))
    .slice(0, MAX_STORE_ENTRIES);
  for (const s of extra)
    rows.push({
      session_id: s.sessionId,
      chat_id: s.chatId,
      title: s.title,
      messages: 0,
      replies: 0,
      queued: 0,
      last_activity: s.lastActivity,
      last: null,
      source: 'agent_store',
      session_id_from: 'agent_store',
    });
  return rows;
}
