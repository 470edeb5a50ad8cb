import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * A fixture of the agent host's session store (`state.db`): the `sessions` and `messages` tables with the
 * columns and types of NousResearch/hermes-agent `hermes_state_common.py` SCHEMA_SQL at SCHEMA_VERSION 30
 * (and the indexes of that SCHEMA_SQL the relay's reads rely on). `olderAgent` drops `chat_id`, as stores
 * written before the agent recorded it.
 */
export const AGENT_SCHEMA_VERSION = 30;

const SESSION_COLUMNS = `
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    created_source TEXT,
    user_id TEXT,
    session_key TEXT,
    chat_id TEXT,
    chat_type TEXT,
    thread_id TEXT,
    display_name TEXT,
    origin_json TEXT,
    expiry_finalized INTEGER DEFAULT 0,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    system_prompt_hash TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    cwd TEXT,
    git_branch TEXT,
    git_repo_root TEXT,
    git_metadata_generation INTEGER NOT NULL DEFAULT 0,
    billing_provider TEXT,
    billing_base_url TEXT,
    billing_mode TEXT,
    estimated_cost_usd REAL,
    actual_cost_usd REAL,
    cost_status TEXT,
    cost_source TEXT,
    pricing_version TEXT,
    title TEXT,
    title_source TEXT,
    last_activity_at REAL,
    last_activity_description TEXT,
    last_activity_provenance TEXT,
    api_call_count INTEGER DEFAULT 0,
    handoff_state TEXT,
    handoff_platform TEXT,
    handoff_error TEXT,
    compression_failure_cooldown_until REAL,
    compression_failure_error TEXT,
    compression_fallback_streak INTEGER NOT NULL DEFAULT 0,
    compression_ineffective_count INTEGER NOT NULL DEFAULT 0,
    compression_recovery_deadline REAL,
    compression_overload_streak INTEGER NOT NULL DEFAULT 0,
    profile_name TEXT,
    transport_profile TEXT,
    rewind_count INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    hidden INTEGER NOT NULL DEFAULT 0,
    last_read_at REAL,
    tool_names TEXT`;

const MESSAGE_COLUMNS = `
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    effect_disposition TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT,
    platform_message_id TEXT,
    observed INTEGER DEFAULT 0,
    _compressed_summary INTEGER NOT NULL DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0,
    api_content TEXT,
    display_kind TEXT,
    display_metadata TEXT,
    display_identity BLOB,
    display_order INTEGER`;

export type SessionRow = {
  id: unknown;
  source?: unknown;
  chat_id?: unknown;
  title?: unknown;
  started_at?: unknown;
  last_activity_at?: unknown;
  profile_name?: unknown;
};

export type MessageRow = {
  session_id: string;
  role: unknown;
  content?: unknown;
  tool_call_id?: unknown;
  tool_calls?: unknown;
  tool_name?: unknown;
  timestamp: unknown;
  active?: unknown;
};

/** A tool_calls list as the agent writes it (OpenAI's shape: `{id, type, function: {name, arguments}}`). */
export function toolCalls(...calls: Array<[id: string, name: string]>): string {
  return JSON.stringify(calls.map(([id, name]) => ({ id, type: 'function', function: { name, arguments: '{"prompt":"a red fox"}' } })));
}

export class AgentStore {
  readonly db: Database.Database;

  /** Creates `file` (and its directory). `journal`: the agent's WAL by default. */
  constructor(
    readonly file: string,
    opts: { olderAgent?: boolean; journal?: 'wal' | 'delete' } = {},
  ) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma(`journal_mode = ${opts.journal ?? 'wal'}`);
    // better-sqlite3 enforces foreign keys; SQLite (and the agent's store) does not unless asked. Tests add
    // messages without their session row when the session does not matter.
    this.db.pragma('foreign_keys = OFF');
    const sessions = opts.olderAgent ? SESSION_COLUMNS.replace(/\n\s*chat_id TEXT,/, '') : SESSION_COLUMNS;
    this.db.exec(`
      CREATE TABLE schema_version (version INTEGER NOT NULL);
      INSERT INTO schema_version VALUES (${opts.olderAgent ? 5 : AGENT_SCHEMA_VERSION});
      CREATE TABLE sessions (${sessions},
        FOREIGN KEY (parent_session_id) REFERENCES sessions(id));
      CREATE TABLE messages (${MESSAGE_COLUMNS});
      CREATE INDEX idx_sessions_source ON sessions(source);
      CREATE INDEX idx_sessions_source_id ON sessions(source, id);
      CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
      CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
      CREATE INDEX idx_messages_session_id ON messages(session_id, id);
    `);
  }

  session(row: SessionRow): this {
    const r = { source: 'phone', chat_id: null, title: null, started_at: 1_772_366_400, last_activity_at: null, profile_name: null, ...row };
    const cols = Object.keys(r).filter((c) => c !== 'chat_id' || this.hasChatId());
    this.db.prepare(`INSERT INTO sessions (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`).run(pick(r, cols));
    return this;
  }

  message(row: MessageRow): this {
    const r = { content: null, tool_call_id: null, tool_calls: null, tool_name: null, active: 1, ...row };
    const cols = Object.keys(r);
    this.db.prepare(`INSERT INTO messages (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`).run(pick(r, cols));
    return this;
  }

  /** An image call: the assistant's request at `at`, and (when `doneAt` is given) the tool's answer. */
  imageCall(sessionId: string, callId: string, at: number, doneAt?: number): this {
    this.message({ session_id: sessionId, role: 'assistant', content: '', tool_calls: toolCalls([callId, 'image_generate']), timestamp: at });
    if (doneAt !== undefined)
      this.message({
        session_id: sessionId,
        role: 'tool',
        content: '{"url":"file:///x.png"}',
        tool_call_id: callId,
        tool_name: 'image_generate',
        timestamp: doneAt,
      });
    return this;
  }

  close(): void {
    this.db.close();
  }

  private hasChatId(): boolean {
    return (this.db.prepare('PRAGMA table_info(sessions)').all() as Array<{ name: string }>).some((c) => c.name === 'chat_id');
  }
}

function pick(r: Record<string, unknown>, cols: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of cols) out[c] = typeof r[c] === 'boolean' ? Number(r[c]) : r[c];
  return out;
}
