import { useState } from 'react';
import type { TrailRow, TrailShot, TrailStepRow } from '@svc/console-api';
import { Ago, Card, Chip, EmptyState, ErrorState, Skeleton } from '@/components/ui';
import { exact, timeOfDay } from '@/lib/format';
import { thumbnailUrl, useTrail, useTrails } from '../api/get-trails';

const iso = (epochS: number) => new Date(epochS * 1000).toISOString();
const words = (s: string) => s.replace(/_/g, ' ');
const short = (hash: string | null) => (hash === null ? 'none' : hash.slice(0, 8));

/** The step's arguments as the log keeps them: a field's type where it carried user content, its value otherwise. */
function Args({ shape }: { shape: TrailStepRow['shape'] }) {
  const entries = Object.entries(shape);
  if (entries.length === 0) return <span className="muted">no arguments</span>;
  return (
    <span className="trail-args mono small">
      {entries.map(([k, v]) => (
        <span key={k} className="trail-arg">
          {k}: {String(v)}
        </span>
      ))}
    </span>
  );
}

/** What the screen's hash did around the step: changed, unchanged, unknown (the phone gave none), or no evidence taken. */
function Evidence({ e }: { e: TrailStepRow['evidence'] }) {
  if (e === null) return <span className="muted small">no evidence (a read, or evidence off)</span>;
  const tone = e.changed === null ? 'neutral' : e.changed ? 'accent' : 'neutral';
  const label = e.changed === null ? 'screen unknown' : e.changed ? 'screen changed' : 'screen unchanged';
  return (
    <span className="trail-evidence small" title={`before ${e.before ?? 'none'}\nafter ${e.after ?? 'none'}`}>
      <Chip tone={tone}>{label}</Chip>{' '}
      <span className="mono">
        {short(e.before)} → {short(e.after)}
      </span>
    </span>
  );
}

function Thumb({ shot, side }: { shot: TrailShot | null; side: 'before' | 'after' }) {
  const [failed, setFailed] = useState(false);
  if (shot === null) return <div className="trail-thumb empty small muted">no screenshot {side}</div>;
  if (shot.media === null || failed)
    return (
      <div className="trail-thumb empty small muted" data-testid="thumb-expired">
        media expired
      </div>
    );
  return (
    <img
      className="trail-thumb"
      src={thumbnailUrl(shot.media)}
      alt={`the session's screenshot ${side} this step`}
      loading="lazy"
      onError={() => setFailed(true)}
    />
  );
}

function outcomeChip(s: TrailStepRow) {
  if (s.outcome === 'answered') return <Chip tone={s.status !== null && s.status < 400 ? 'good' : 'warn'}>{s.status}</Chip>;
  if (s.outcome === 'pending' || s.outcome === 'awaiting_confirmation') return <Chip tone="info">{words(s.outcome)}</Chip>;
  return <Chip tone="bad">{words(s.outcome)}</Chip>;
}

function Steps({ session }: { session: string }) {
  const q = useTrail(session);
  if (q.isError) return <ErrorState what="the session's steps" error={q.error} onRetry={() => void q.refetch()} />;
  if (!q.data) return <Skeleton lines={4} height={22} />;
  const { trail, steps } = q.data;
  return (
    <>
      {trail.dropped > 0 ? <p className="muted small">The oldest steps of this session are no longer kept.</p> : null}
      <ol className="trail-steps" data-testid="trail-steps">
        {steps.map((s, i) => (
          <li key={s.request_id} className="trail-step" data-path={s.path}>
            <div className="trail-head">
              <span className="muted">#{i + 1}</span>
              <span className="mono" title={s.at === null ? '' : exact(s.at * 1000)}>
                {s.at === null ? '' : timeOfDay(iso(s.at))}
              </span>
              <span className="mono strong">
                {s.method} {s.path}
              </span>
              {outcomeChip(s)}
              {s.safety && s.safety !== 'allow' && s.safety !== 'exempt' ? <Chip tone="warn">{words(s.safety)}</Chip> : null}
            </div>
            <Args shape={s.shape} />
            <Evidence e={s.evidence} />
            <div className="trail-thumbs">
              <Thumb shot={s.shot_before} side="before" />
              <Thumb shot={s.shot_after} side="after" />
            </div>
          </li>
        ))}
      </ol>
    </>
  );
}

/**
 * An MCP session played back (issue 40, item 6): the recent sessions, and the chosen one's steps in order with
 * their arguments (as redacted as the log), outcome, the screen's hash before and after, and the session's
 * screenshots nearest the step while their media lives.
 */
export function McpPlayback() {
  const q = useTrails();
  const [chosen, setChosen] = useState<string | null>(null);
  const trails = q.data?.trails ?? [];
  const session = chosen ?? trails[0]?.session ?? null;
  return (
    <Card title="MCP sessions">
      {q.isError ? <ErrorState what="the MCP sessions" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.data && trails.length === 0 ? (
        <EmptyState title="No MCP session yet">
          An agent&apos;s calls through /mcp show here step by step, with the screen before and after each action (evidence: {q.data.evidence}).
        </EmptyState>
      ) : null}
      {trails.length > 0 ? (
        <div className="family-chips trail-list" role="group" aria-label="MCP session">
          {trails.map((t: TrailRow) => (
            <button
              key={t.session}
              type="button"
              className={`family-chip ${session === t.session ? 'on' : ''}`}
              aria-pressed={session === t.session}
              onClick={() => setChosen(t.session)}
            >
              {t.client} · {t.device_name ?? t.token_prefix} · {t.steps} steps · <Ago at={t.last_at} />
            </button>
          ))}
        </div>
      ) : null}
      {session ? <Steps session={session} /> : null}
    </Card>
  );
}
