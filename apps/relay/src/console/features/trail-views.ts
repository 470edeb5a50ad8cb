import { epoch, type McpTrail, type TrailStep } from '@svc/domain';
import type { TrailRow, TrailShot, TrailStepRow } from '@svc/console-api';

/** What the views need to know of the world outside the trail: a phone's name, a screenshot's live media. */
export type TrailLookups = {
  deviceName: (tokenPrefix: string) => string | null;
  /** The live media entry (token prefix) a screenshot command's image is, or null once it expired or is unknown. */
  shotMedia: (requestId: string) => string | null;
};

export function trailRow(t: McpTrail, look: TrailLookups): TrailRow {
  return {
    session: t.session,
    client: t.client,
    token_prefix: t.tokenPrefix,
    device_name: look.deviceName(t.tokenPrefix),
    started_at: epoch(t.startedAt),
    last_at: epoch(t.lastAt),
    steps: t.steps.length,
    dropped: t.dropped,
  };
}

/**
 * A session's steps in order, each with the session's screenshot nearest before and after it (a screenshot
 * step itself included after the step it follows), so the page shows what the agent saw around each act.
 */
export function trailSteps(t: McpTrail, look: TrailLookups): TrailStepRow[] {
  const isShot = (s: TrailStep) => s.path === '/screenshot' && s.outcome === 'answered' && s.status !== null && s.status < 300;
  const shot = (s: TrailStep | undefined): TrailShot | null =>
    s ? { request_id: s.requestId, at: epoch(s.at), media: look.shotMedia(s.requestId) } : null;
  const steps = t.steps;
  const before: (TrailStep | undefined)[] = [];
  let last: TrailStep | undefined;
  for (const s of steps) {
    before.push(last);
    if (isShot(s)) last = s;
  }
  const after: (TrailStep | undefined)[] = new Array<TrailStep | undefined>(steps.length);
  let next: TrailStep | undefined;
  for (let i = steps.length - 1; i >= 0; i--) {
    after[i] = next;
    if (isShot(steps[i])) next = steps[i];
  }
  return steps.map((s, i) => ({
    request_id: s.requestId,
    at: epoch(s.at),
    method: s.method,
    path: s.path,
    shape: { ...s.shape },
    outcome: s.outcome,
    status: s.status,
    latency_ms: s.latencyMs,
    safety: s.safety,
    evidence: s.evidence
      ? {
          before: s.evidence.before,
          after: s.evidence.after,
          changed: s.evidence.before !== null && s.evidence.after !== null ? s.evidence.before !== s.evidence.after : null,
        }
      : null,
    shot_before: shot(before[i]),
    shot_after: shot(after[i]),
  }));
}
