import type BetterSqlite3 from 'better-sqlite3';
import { StoreUnusable, type StoreSchema } from './state-db';

/**
 * What the relay reads of the agent's session store (NousResearch/hermes-agent `hermes_state_common.py`
 * SCHEMA_SQL, schema version 30): `sessions(id, source, chat_id, title, started_at, last_activity_at, ...)`
 * and `messages(id, session_id, role, tool_call_id, tool_calls, tool_name, timestamp, active, ...)`. Every
 * column is typed by SQLite per value, not per column, so every value is checked again here.
 */

/** Phone sessions read from one store, at most (its newest by id: the agent's ids start with the time). */
export const MAX_PHONE_SESSIONS = 1000;
/** Messages looked at for one image-activity answer (the reference relay's bound). */
export const MAX_IMAGE_ROWS = 250;
/** Text kept of a session title. */
export const MAX_TITLE = 256;
/** A `tool_calls` JSON past this is not parsed (an image call's arguments are a prompt, not megabytes). */
const MAX_TOOL_CALLS_BYTES = 256 * 1024;
export const IMAGE_TOOL = 'image_generate';
/** An id the relay passes on (a session, a chat, a call): 1-256 printable characters, as the routes take them. */
const ID = /^[^\x00-\x1f\x7f]{1,256}$/;
/** Epoch seconds the relay believes (1970 to 5138). */
const sane = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x < 1e11;

export type PhoneSession = { sessionId: string; chatId: string; title: string | null; lastActivity: number | null };

export type StoreActivity = { call_id: string; tool_name: string; state: 'running' | 'completed'; started_at: number; completed_at: number | null };

function need(table: StoreSchema['sessions'], name: string, columns: string[]): ReadonlySet<string> {
  if (!table) throw new StoreUnusable(`no ${name} table`);
  if (!table.plain) throw new StoreUnusable(`${name} is not a plain table (refused)`);
  for (const c of columns)
    if (!table.columns.has(c)) throw new StoreUnusable(c === 'chat_id' ? 'no chat_id column (older agent)' : `no ${name}.${c} column`);
  return table.columns;
}

/** The SQL reading phone sessions, for the columns this store has (exported for the query-plan test). */
export function phoneSessionsSql(columns: ReadonlySet<string>): string {
  const num = (c: string) => (columns.has(c) ? `CASE WHEN typeof(${c}) IN ('integer', 'real') THEN ${c} END` : 'NULL');
  return `SELECT id, chat_id,
      ${columns.has('title') ? `CASE WHEN typeof(title) = 'text' THEN substr(title, 1, ${MAX_TITLE}) END` : 'NULL'} AS title,
      ${num('started_at')} AS started_at, ${num('last_activity_at')} AS last_activity_at
    FROM sessions
    WHERE source = 'phone' AND typeof(id) = 'text' AND typeof(chat_id) = 'text'
      AND length(id) BETWEEN 1 AND 256 AND length(chat_id) BETWEEN 1 AND 256
    ORDER BY id DESC LIMIT ${MAX_PHONE_SESSIONS}`;
}

/** Every `source = 'phone'` session with a chat_id: newest by id first, at most MAX_PHONE_SESSIONS. */
export function readPhoneSessions(schema: StoreSchema, prepare: (sql: string) => BetterSqlite3.Statement): PhoneSession[] {
  const columns = need(schema.sessions, 'sessions', ['id', 'source', 'chat_id']);
  const rows = prepare(phoneSessionsSql(columns)).all() as Array<Record<string, unknown>>;
  const out: PhoneSession[] = [];
  for (const r of rows) {
    const { id, chat_id: chatId, title } = r;
    // The app skips blank ids (ConnectionViewModel.kt: isNotBlank), and the relay takes only printable ones.
    if (typeof id !== 'string' || typeof chatId !== 'string' || !ID.test(id) || !ID.test(chatId) || !id.trim() || !chatId.trim()) continue;
    const times = [r.started_at, r.last_activity_at].filter(sane);
    out.push({ sessionId: id, chatId, title: typeof title === 'string' ? title : null, lastActivity: times.length ? Math.max(...times) : null });
  }
  return out;
}

/** The SQL reading a session's newest messages, for the columns this store has (exported for the query-plan test). */
export function imageRowsSql(columns: ReadonlySet<string>): string {
  return `SELECT role,
      CASE WHEN role = 'assistant' AND typeof(tool_calls) = 'text' AND instr(tool_calls, '${IMAGE_TOOL}') > 0
        AND octet_length(tool_calls) <= ${MAX_TOOL_CALLS_BYTES} THEN tool_calls END AS tool_calls,
      CASE WHEN role = 'tool' AND typeof(tool_call_id) = 'text' THEN substr(tool_call_id, 1, 257) END AS tool_call_id,
      CASE WHEN role = 'tool' AND typeof(tool_name) = 'text' THEN substr(tool_name, 1, 64) END AS tool_name,
      timestamp
    FROM messages
    WHERE session_id = ?${columns.has('active') ? ' AND active = 1' : ''} AND timestamp >= ? AND typeof(timestamp) IN ('integer', 'real')
    ORDER BY timestamp DESC, id DESC LIMIT ${MAX_IMAGE_ROWS}`;
}

/**
 * One session's image generations from its newest MAX_IMAGE_ROWS active messages at or after `since`,
 * read in time order: an assistant message whose `tool_calls` names `image_generate` starts a call
 * (`running`), a later `tool` message of `image_generate` answering that call id completes it. Rows that
 * do not parse (bad JSON, wrong types, ids out of bounds) are skipped.
 */
export function readImageActivity(
  schema: StoreSchema,
  prepare: (sql: string) => BetterSqlite3.Statement,
  sessionId: string,
  since: number,
): StoreActivity[] {
  const columns = need(schema.messages, 'messages', ['id', 'session_id', 'role', 'tool_call_id', 'tool_calls', 'tool_name', 'timestamp']);
  const rows = (prepare(imageRowsSql(columns)).all(sessionId, since) as Array<Record<string, unknown>>).reverse();
  const calls = new Map<string, StoreActivity>();
  for (const r of rows) {
    if (!sane(r.timestamp)) continue;
    if (r.role === 'assistant' && typeof r.tool_calls === 'string') {
      for (const id of imageCallIds(r.tool_calls))
        if (!calls.has(id)) calls.set(id, { call_id: id, tool_name: IMAGE_TOOL, state: 'running', started_at: r.timestamp, completed_at: null });
    } else if (r.role === 'tool' && r.tool_name === IMAGE_TOOL && typeof r.tool_call_id === 'string') {
      const call = calls.get(r.tool_call_id);
      if (call && call.state === 'running') {
        call.state = 'completed';
        call.completed_at = r.timestamp;
      }
    }
  }
  return [...calls.values()];
}

/** The ids of `image_generate` calls in a `tool_calls` list (`{id, function: {name}}` or `{id, name}`). */
function imageCallIds(raw: string): string[] {
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(list)) return [];
  const out: string[] = [];
  for (const item of list.slice(0, 64) as unknown[]) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    const { id, function: fn, name } = item as Record<string, unknown>;
    const called = typeof fn === 'object' && fn !== null && !Array.isArray(fn) ? (fn as Record<string, unknown>).name : name;
    if (called === IMAGE_TOOL && typeof id === 'string' && ID.test(id)) out.push(id);
  }
  return out;
}
