import type { VoiceCallRow, VoiceSessionEndedRow, VoiceSessionOpenRow, VoiceUsageRow, VoiceView } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Ago, Card, Chip, EmptyState } from '@/components/ui';
import { bytes, count, exact, timeOfDay } from '@/lib/format';
import { useServerNow } from '@/lib/server-time';
import { callerText, counted, KIND_TITLE, latencyText, secondsText, words } from './voice-words';

/** How long a held session has left on the relay's clock, ticking: it ends unresumed at zero. */
function HeldLeft({ until }: { until: number }) {
  const left = Math.max(0, Math.floor(until - useServerNow(1000) / 1000));
  return (
    <span className={left < 60 ? 'warn-text' : undefined} role="timer" aria-live="off" data-testid="held-left">
      {left === 0 ? 'ending now' : `${left < 60 ? `${left} s` : secondsText(left)} left`}
    </span>
  );
}

const STATE: Record<VoiceSessionOpenRow['state'], { tone: 'info' | 'good' | 'warn'; text: string }> = {
  waiting: { tone: 'info', text: 'waiting for its socket' },
  connected: { tone: 'good', text: 'streaming' },
  held: { tone: 'warn', text: 'dropped, held for a resume' },
};

const OPEN_COLUMNS: Array<Column<VoiceSessionOpenRow>> = [
  { label: 'Kind', className: 'strong', render: (s) => KIND_TITLE[s.kind] },
  {
    label: 'State',
    render: (s) => (
      <>
        <Chip tone={STATE[s.state].tone}>{STATE[s.state].text}</Chip>
        {s.state === 'held' ? (
          <div className="muted small">
            <HeldLeft until={s.expires_at} />
            {s.held_bytes === null ? null : ` · ${bytes(s.held_bytes)} held for it`}
          </div>
        ) : s.state === 'waiting' ? (
          <div className="muted small">
            expires <Ago at={s.expires_at} />
          </div>
        ) : null}
      </>
    ),
  },
  { label: 'Caller', className: 'mono', render: (s) => callerText(s.actor) },
  { label: 'Provider', className: 'mono', render: (s) => `${s.provider}${s.profile ? ` · ${s.profile}` : ''}` },
  { label: 'Opened', render: (s) => <Ago at={s.created_at} /> },
];

const ENDED_COLUMNS: Array<Column<VoiceSessionEndedRow>> = [
  { label: 'Kind', className: 'strong', render: (s) => KIND_TITLE[s.kind] },
  { label: 'Caller', className: 'mono', render: (s) => callerText(s.actor) },
  { label: 'Provider', className: 'mono', render: (s) => `${s.provider}${s.profile ? ` · ${s.profile}` : ''}` },
  { label: 'Lasted', className: 'nowrap', render: (s) => secondsText(s.duration_seconds) },
  {
    label: 'Ended',
    render: (s) => (
      <>
        <Chip tone={s.reason === 'closed' ? 'neutral' : s.reason === 'revoked' || s.reason === 'relay_restarted' ? 'warn' : 'info'}>
          {words(s.reason)}
        </Chip>
        {s.drops > 0 ? (
          <span className="muted small">
            {' '}
            · {counted(s.drops, 'drop')}, {s.resumes} resumed
          </span>
        ) : null}
      </>
    ),
  },
  {
    label: 'Audio',
    className: 'col-opt small',
    headClassName: 'col-opt',
    render: (s) => (s.bytes === 0 && s.chars === 0 ? <span className="muted">none</span> : `${bytes(s.bytes)} · ${counted(s.chars, 'char')}`),
  },
  { label: 'When', render: (s) => <Ago at={s.ended_at} /> },
];

const CALL_COLUMNS: Array<Column<VoiceCallRow>> = [
  {
    label: 'Time (UTC)',
    className: 'mono nowrap',
    cellProps: (c) => ({ title: exact(c.at * 1000) }),
    render: (c) => timeOfDay(new Date(c.at * 1000).toISOString()),
  },
  { label: 'Call', render: (c) => c.kind },
  {
    label: 'Outcome',
    render: (c) =>
      c.outcome === 'ok' ? (
        <Chip tone="good">ok</Chip>
      ) : (
        <>
          <Chip tone="bad">failed</Chip> <span className="mono small">{c.error}</span>
        </>
      ),
  },
  { label: 'Latency', className: 'nowrap', render: (c) => latencyText(c.latency_ms) },
  { label: 'Provider', className: 'mono', render: (c) => `${c.provider}${c.profile ? ` · ${c.profile}` : ''}` },
  { label: 'Caller', className: 'mono nowrap col-opt', headClassName: 'col-opt', render: (c) => callerText(c.actor) },
  {
    label: 'Size',
    className: 'col-opt small nowrap',
    headClassName: 'col-opt',
    render: (c) =>
      c.kind === 'transcribe'
        ? `${c.audio_seconds === null ? bytes(c.bytes) : secondsText(c.audio_seconds)} in · ${counted(c.chars, 'char')} out`
        : `${counted(c.chars, 'char')} in · ${bytes(c.bytes)} out`,
  },
];

/** What the held sessions hold together, against the bound, and how long a drop is held. */
function HeldNote({ held }: { held: VoiceView['held'] }) {
  return (
    <p className="muted small card-note" data-testid="voice-held">
      A session whose phone lost its connection is held {secondsText(held.grace_seconds)} for the phone to resume it (
      <code>RELAY_VOICE_RESUME_GRACE_SECONDS</code>, the app retries that long).{' '}
      {held.sessions === 0 ? 'None is held now' : `${counted(held.sessions, 'session')} held now, ${bytes(held.bytes)}`} of at most{' '}
      {bytes(held.max_bytes)} together (<code>RELAY_VOICE_HELD_MAX_BYTES</code>; past it the one held longest ends).
    </p>
  );
}

export function SessionsCard({ v }: { v: VoiceView }) {
  return (
    <Card title={`Sessions${v.open_sessions.length ? ` (${v.open_sessions.length} open)` : ''}`}>
      <HeldNote held={v.held} />
      {v.open_sessions.length === 0 ? (
        <EmptyState title="No voice session open">
          A phone opens one when it speaks a reply aloud (voice output) or starts a realtime conversation; it shows here while it lasts.
        </EmptyState>
      ) : (
        <DataTable
          testId="voice-open-sessions"
          columns={OPEN_COLUMNS}
          rows={v.open_sessions}
          rowKey={(s) => s.session_id}
          rowProps={(s) => ({ 'data-session': s.session_id, 'data-state': s.state })}
        />
      )}
      <h3 className="voice-subhead">Recently ended</h3>
      {v.ended_sessions.length === 0 ? (
        <p className="muted small">None yet. Each ended session keeps its reason, how long it lasted and how much audio it carried.</p>
      ) : (
        <DataTable
          testId="voice-ended-sessions"
          columns={ENDED_COLUMNS}
          rows={v.ended_sessions.slice(0, 20)}
          rowKey={(s) => s.session_id}
          rowProps={(s) => ({ 'data-session': s.session_id })}
        />
      )}
    </Card>
  );
}

export function CallsCard({ calls }: { calls: VoiceCallRow[] }) {
  return (
    <Card title="Recent calls">
      {calls.length === 0 ? (
        <EmptyState title="No transcribe or synthesize calls yet">
          Calls to <code>/voice/transcribe</code> and <code>/voice/synthesize</code> show here with their outcome and latency, never their text or
          audio.
        </EmptyState>
      ) : (
        <DataTable
          testId="voice-calls"
          layout="log"
          columns={CALL_COLUMNS}
          rows={calls}
          rowKey={(c) => c.seq}
          rowProps={(c) => ({ 'data-outcome': c.outcome })}
        />
      )}
    </Card>
  );
}

const USAGE_COLUMNS: Array<Column<VoiceUsageRow>> = [
  { label: 'Provider', className: 'mono strong', render: (u) => u.provider },
  { label: 'Profile', className: 'mono', render: (u) => u.profile },
  { label: 'Speech', render: (u) => `${counted(u.syntheses, 'synthesis', 'syntheses')} · ${counted(u.sessions, 'session')}` },
  { label: 'Listening', render: (u) => `${counted(u.transcriptions, 'transcription')} · ${secondsText(u.audio_seconds)}` },
  { label: 'Failed', render: (u) => (u.failures ? <Chip tone="bad">{count(u.failures)}</Chip> : <span className="muted">0</span>) },
  {
    label: 'Volume',
    className: 'col-opt small',
    headClassName: 'col-opt',
    render: (u) => `${counted(u.characters, 'char')} · ${bytes(u.audio_bytes)}`,
  },
  { label: 'Last used', render: (u) => <Ago at={u.last_used_at} /> },
];

export function UsageCard({ usage }: { usage: VoiceView['usage'] }) {
  return (
    <Card title="Provider usage">
      <p className="muted small card-note">
        What this relay asked of each provider, from its own log
        {usage.since ? (
          <>
            {' '}
            (since <Ago at={usage.since} />)
          </>
        ) : null}
        .{' '}
        {usage.phones_may_read
          ? 'Phones may read it too (GET /usage/providers).'
          : 'Phones cannot read it: GET /usage/providers is off until RELAY_PROVIDER_USAGE_ENABLED=1.'}
      </p>
      {usage.rows.length === 0 ? (
        <EmptyState title="Nothing used yet">Each provider and profile gets a row with its first call or session.</EmptyState>
      ) : (
        <DataTable testId="voice-usage" columns={USAGE_COLUMNS} rows={usage.rows} rowKey={(u) => `${u.provider}/${u.profile}`} />
      )}
    </Card>
  );
}
