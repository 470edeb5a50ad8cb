import { Injectable } from '@nestjs/common';
import { DomainError, reportImageActivity, type ImageActivityEntry } from '@svc/domain';
import { AgentSessionStore } from '../agent-store/agent-session-store';
import { IMAGE_TOOL, type StoreActivity } from '../agent-store/agent-queries';
import { CommandLoop } from '../common/loop/command-loop';
import { sinceMsOf, type ActivityQuery, type ReportDto } from './image-activity.dto';

@Injectable()
export class ImageActivityService {
  constructor(
    private readonly loop: CommandLoop,
    private readonly agentStore: AgentSessionStore,
  ) {}

  async report(b: ReportDto) {
    const [e] = await this.loop.run('operator', (m) =>
      reportImageActivity(m, {
        sessionId: b.session_id,
        callId: b.call_id,
        status: b.status,
        progress: b.progress ?? null,
        errorCode: b.error_code ?? null,
      }),
    );
    return { ok: true as const, ts: Date.parse(e.at) / 1000 };
  }

  /**
   * `since`: epoch seconds (fractions and exponent form allowed). Two views of the same entries:
   * `activities`, one per call (the app's `ImageActivitySnapshot`: every call with a report at or after
   * `since`, in its latest state, merged with the calls the agent's session store of `profile` holds for
   * the session), and `activity`, the platform's reports strictly after `since` with a `cursor`.
   * `session_store` says whether the store was read. A profile that is not a directory of the agent home
   * is 404 (as the reference relay answers).
   */
  list(q: ActivityQuery) {
    const session = q.session_id.trim();
    const prof = q.profile ? q.profile.trim() : 'default';
    const sinceMs = sinceMsOf(q.since);
    const store = this.agentStore.storeOf(prof);
    if (!store)
      throw new DomainError('image_activity.profile_not_found', 'not_found', 'no such profile in the agent home', {
        profile: prof,
        wireError: 'profile_not_found',
      });
    const fromStore = this.agentStore.imageActivity(store, session, sinceMs === null ? 0 : sinceMs / 1000);
    const all = this.loop.models.imageActivity.forSession(session, null);
    const entries = sinceMs === null ? all : all.filter((x) => x.at > sinceMs);
    const cursor = entries.length ? entries[entries.length - 1].at / 1000 : sinceMs === null ? null : sinceMs / 1000;
    return {
      ok: true as const,
      session_id: session,
      profile: prof,
      activities: merged(calls(all, sinceMs), fromStore.activities),
      activity: entries.map((x) => ({ call_id: x.callId, status: x.status, progress: x.progress, error_code: x.errorCode, ts: x.at / 1000 })),
      cursor,
      session_store: fromStore.status,
    };
  }
}

type Call = ReturnType<typeof calls>[number];

/**
 * The platform's calls and the store's, one entry per call id, ordered by start: a call both know keeps the
 * earlier start and the furthest state (the platform's `completed`/`failed` with its code, else the store's
 * `completed`, else `running`).
 */
function merged(platform: Call[], store: StoreActivity[]): Call[] {
  const byId = new Map<string, Call>(platform.map((c) => [c.call_id, c]));
  for (const s of store) {
    const p = byId.get(s.call_id);
    if (!p) {
      byId.set(s.call_id, { ...s, progress: null, error_code: null });
      continue;
    }
    const started_at = Math.min(p.started_at, s.started_at);
    if (p.state === 'running' && s.state === 'completed') byId.set(s.call_id, { ...p, started_at, state: 'completed', completed_at: s.completed_at });
    else byId.set(s.call_id, { ...p, started_at });
  }
  return [...byId.values()].sort((a, b) => a.started_at - b.started_at || (a.call_id < b.call_id ? -1 : a.call_id > b.call_id ? 1 : 0));
}

/** One entry per call, in the order calls started: `state` `running` until `completed` or `failed`. */
function calls(entries: readonly ImageActivityEntry[], sinceMs: number | null) {
  const byCall = new Map<
    string,
    {
      call_id: string;
      tool_name: string;
      state: string;
      started_at: number;
      completed_at: number | null;
      progress: number | null;
      error_code: string | null;
      last: number;
    }
  >();
  for (const x of entries) {
    let c = byCall.get(x.callId);
    if (!c) {
      c = {
        call_id: x.callId,
        tool_name: IMAGE_TOOL,
        state: 'running',
        started_at: x.at / 1000,
        completed_at: null,
        progress: null,
        error_code: null,
        last: x.at,
      };
      byCall.set(x.callId, c);
    }
    c.last = x.at;
    if (x.status === 'progress') c.progress = x.progress;
    if (x.status === 'completed' || x.status === 'failed') {
      c.state = x.status;
      c.completed_at = x.at / 1000;
      c.error_code = x.errorCode;
    }
  }
  return [...byCall.values()].filter((c) => sinceMs === null || c.last >= sinceMs).map(({ last: _last, ...c }) => c);
}
