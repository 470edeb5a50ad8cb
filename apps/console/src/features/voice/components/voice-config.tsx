import { useState } from 'react';
import type { VoiceCallDefault, VoiceProviderRow, VoiceSectionRow, VoiceView } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Button, Card, Chip, Dialog, InlineError } from '@/components/ui';
import { useSetInsecureApiBearer } from '../api/set-insecure-api-bearer';
import { useSetSectionEnabled } from '../api/set-section-enabled';

const DEFAULT_LABEL: Record<VoiceProviderRow['default_for'][number], string> = {
  voice_output: 'voice output',
  realtime_voice: 'realtime voice',
  realtime_agent: 'realtime agent',
  synthesize: '/voice/synthesize',
  transcribe: '/voice/transcribe',
};

function Availability({ available, reason }: { available: boolean; reason: string | null }) {
  return available ? (
    <Chip tone="good">available</Chip>
  ) : (
    <>
      <Chip tone="bad">unavailable</Chip> <span className="small">{reason}</span>
    </>
  );
}

const PROVIDER_COLUMNS: Array<Column<VoiceProviderRow>> = [
  {
    label: 'Provider',
    render: (p) => (
      <>
        <div className="strong">{p.label}</div>
        <div className="muted mono small">
          {p.provider}
          {p.realtime ? ' · realtime API' : ''}
        </div>
      </>
    ),
  },
  { label: 'Speech', render: (p) => <Availability available={p.available} reason={p.unavailable_reason} /> },
  {
    label: 'Speech to text',
    render: (p) =>
      p.stt_unavailable_reason !== null && p.stt_unavailable_reason === p.unavailable_reason ? (
        <Chip tone="bad">unavailable</Chip>
      ) : (
        <Availability available={p.stt_unavailable_reason === null} reason={p.stt_unavailable_reason} />
      ),
  },
  {
    label: 'Default for',
    render: (p) =>
      p.default_for.length === 0 ? (
        <span className="muted">nothing</span>
      ) : (
        <span className="chips">
          {p.default_for.map((d) => (
            <Chip key={d} tone="accent">
              {DEFAULT_LABEL[d]}
            </Chip>
          ))}
        </span>
      ),
  },
];

export function ProvidersCard({ providers }: { providers: VoiceProviderRow[] }) {
  return (
    <Card title="Providers">
      <p className="muted small card-note">
        The speech providers this relay has, whether each can serve now and why not. Keys are never shown: only whether one is set.
      </p>
      <DataTable
        testId="voice-providers"
        columns={PROVIDER_COLUMNS}
        rows={providers}
        rowKey={(p) => p.provider}
        rowProps={(p) => ({ 'data-provider': p.provider })}
      />
    </Card>
  );
}

function CallDefault({ route, d }: { route: string; d: VoiceCallDefault }) {
  return (
    <>
      <dt className="mono">{route}</dt>
      <dd>
        <span className="mono">{d.provider}</span> <Availability available={d.available} reason={d.unavailable_reason} />
      </dd>
    </>
  );
}

export function SectionsCard({ v }: { v: VoiceView }) {
  const toggle = useSetSectionEnabled();
  const columns: Array<Column<VoiceSectionRow>> = [
    {
      label: 'Section',
      render: (s) => (
        <>
          <div className="strong">{s.title}</div>
          <div className="muted mono small">{s.section}</div>
        </>
      ),
    },
    {
      label: 'For every phone',
      render: (s) =>
        s.forced_by_env ? (
          <Chip tone="info" title="RELAY_REALTIME_VOICE_ENABLED=1 keeps it on; unset it and restart to turn it off">
            on by RELAY_REALTIME_VOICE_ENABLED
          </Chip>
        ) : s.enabled ? (
          <Chip tone="good">on</Chip>
        ) : (
          <Chip tone="warn">off</Chip>
        ),
    },
    {
      label: 'Provider',
      render: (s) => (
        <>
          <span className="mono">{s.provider}</span> <Availability available={s.available} reason={s.unavailable_reason} />
        </>
      ),
    },
    {
      label: 'Model · voice',
      className: 'col-opt small',
      headClassName: 'col-opt',
      render: (s) => (
        <span className="mono">
          {s.model} · {s.voice}
          {s.sample_rate ? ` · ${s.sample_rate} Hz` : ''}
        </span>
      ),
    },
    {
      label: 'Actions',
      srOnly: true,
      className: 'row-actions',
      render: (s) =>
        s.forced_by_env ? null : (
          <Button
            size="sm"
            busy={toggle.isPending && toggle.variables?.section === s.section}
            onClick={() => toggle.mutate({ section: s.section, enabled: !s.enabled })}
            aria-label={`${s.enabled ? 'Turn off' : 'Turn on'} ${s.title}`}
          >
            {s.enabled ? 'Turn off' : 'Turn on'}
          </Button>
        ),
    },
  ];
  return (
    <Card title="Sections">
      <p className="muted small card-note">
        What phones get when they name no profile (a profile&apos;s own config may choose otherwise). The switch is relay-wide, as{' '}
        <code>PATCH /voice/…/config {'{"enabled": …}'}</code> from this host; it is recorded with you as the actor.
      </p>
      <DataTable
        testId="voice-sections"
        columns={columns}
        rows={v.sections}
        rowKey={(s) => s.section}
        rowProps={(s) => ({ 'data-section': s.section })}
      />
      <InlineError error={toggle.error} />
      <dl className="facts voice-calls-default" data-testid="voice-calls-default">
        <CallDefault route="/voice/synthesize" d={v.calls_default.synthesize} />
        <CallDefault route="/voice/transcribe" d={v.calls_default.transcribe} />
      </dl>
    </Card>
  );
}

export function SecurityCard({ security }: { security: VoiceView['security'] }) {
  const change = useSetInsecureApiBearer();
  const [confirming, setConfirming] = useState(false);
  const on = security.allow_insecure_api_bearer;
  return (
    <Card
      title="Insecure API key"
      actions={
        on ? (
          <Button size="sm" busy={change.isPending} onClick={() => change.mutate(false)}>
            Refuse again
          </Button>
        ) : (
          <Button size="sm" variant="danger" busy={change.isPending} onClick={() => setConfirming(true)}>
            Allow…
          </Button>
        )
      }
    >
      <div data-testid="voice-security">
        <p>
          {on ? <Chip tone="warn">allowed until restart</Chip> : <Chip tone="good">refused</Chip>}{' '}
          {on
            ? 'Other machines may call voice with the API key over plain HTTP: the key crosses the network readable.'
            : 'Voice calls with the API key from other machines over plain HTTP are refused (the key would cross the network readable).'}
        </p>
        <p className="muted small">
          {security.api_key_configured
            ? 'An API key is set (API_SERVER_KEY).'
            : 'No API key is set (API_SERVER_KEY): API voice is off, and this switch changes nothing.'}{' '}
          {security.tls ? 'TLS is on: API calls are encrypted; the switch matters only for plain HTTP.' : 'TLS is off.'} The switch lasts until the
          relay restarts (<code>svc relay insecure-api-key on|off</code> does the same).
        </p>
      </div>
      <InlineError error={change.error} />
      <Dialog
        open={confirming}
        title="Allow the API key over plain HTTP?"
        onClose={() => setConfirming(false)}
        footer={
          <>
            <Button onClick={() => setConfirming(false)}>Cancel</Button>
            <Button variant="danger" busy={change.isPending} onClick={() => change.mutate(true, { onSettled: () => setConfirming(false) })}>
              Allow until restart
            </Button>
          </>
        }
      >
        <p>
          Voice calls from other machines may then carry the API key without TLS: anyone on the network path can read it and use it. It stays allowed
          until you refuse it again or the relay restarts.
        </p>
      </Dialog>
    </Card>
  );
}
