import type { VoiceView } from '@svc/console-api';
import { Ago, ErrorState, PageHeader, Skeleton, Stat } from '@/components/ui';
import { count } from '@/lib/format';
import { useVoice } from '../api/get-voice';
import { CallsCard, SessionsCard, UsageCard } from './voice-activity';
import { ProvidersCard, SectionsCard, SecurityCard } from './voice-config';

/** What stops voice for phones, in words, with what to do; nothing when it can serve. */
function VoiceState({ v }: { v: VoiceView }) {
  const usable = v.providers.filter((p) => p.available);
  const output = v.sections.find((s) => s.section === 'voice_output');
  if (usable.length === 0)
    return (
      <div className="callout callout-warn" role="status" data-testid="voice-state">
        <div>
          <strong>No speech provider can serve.</strong> Phones&apos; spoken replies, transcription and realtime sessions are all refused until one
          can:{' '}
          {v.providers.map((p, i) => (
            <span key={p.provider}>
              {i > 0 ? '; ' : ''}
              <span className="mono">{p.provider}</span>: {p.unavailable_reason}
            </span>
          ))}
          .
        </div>
      </div>
    );
  if (output && !output.enabled)
    return (
      <div className="callout callout-warn" role="status" data-testid="voice-state">
        <div>
          <strong>Voice output is off for every phone.</strong> Phones&apos; requests to speak a reply are refused (<code>voice.output_disabled</code>
          ) until you turn it on below. Transcription and one-shot speech still answer.
        </div>
      </div>
    );
  return null;
}

export function VoicePage() {
  const q = useVoice();
  const v = q.data;
  return (
    <>
      <PageHeader
        title="Voice"
        subtitle="Which provider speaks and listens for phones, sessions as they happen, and how each call went and how long it took. Never the words or the audio."
      />
      {q.isError ? <ErrorState what="voice" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.isPending ? <Skeleton lines={6} height={22} /> : null}
      {v ? (
        <>
          <VoiceState v={v} />
          <div className="stat-grid" data-testid="voice-stats">
            <Stat
              label="Open sessions"
              value={v.open_sessions.length}
              hint={`${v.held.sessions ? `${v.held.sessions} held for a resume · ` : ''}${v.ended_sessions.length} ended lately`}
            />
            <Stat label="Syntheses" value={count(v.totals.syntheses)} hint="since the log began" />
            <Stat label="Transcriptions" value={count(v.totals.transcriptions)} hint="since the log began" />
            <Stat
              label="Failed calls"
              value={count(v.totals.failures)}
              tone={v.totals.failures ? 'warn' : undefined}
              hint={
                <>
                  {v.totals.last_at === null ? (
                    'no voice call yet'
                  ) : (
                    <>
                      last call <Ago at={v.totals.last_at} />
                    </>
                  )}
                </>
              }
            />
          </div>
          <SessionsCard v={v} />
          <CallsCard calls={v.calls} />
          <ProvidersCard providers={v.providers} />
          <SectionsCard v={v} />
          <SecurityCard security={v.security} />
          <UsageCard usage={v.usage} />
        </>
      ) : null}
    </>
  );
}
