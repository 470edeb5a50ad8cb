import { useState } from 'react';
import type { PreflightAnswer } from '@svc/console-api';
import { Button, Card, InlineError } from '@/components/ui';
import { useRunPreflight } from '../api/run-preflight';

const MARK = { true: '✓', false: '✗', null: '?' } as const;

const LABEL: Record<string, string> = {
  address: 'Address',
  port: 'Port',
  identity: 'Identity',
  openssl: 'openssl',
  'api-upstream': '/api upstream',
  'dashboard-upstream': '/dashboard upstream',
};

/** A host and port for Secure Link, checked by the relay itself (it never connects to what is typed here). */
export function PreflightCard({ currentHost, currentPort }: { currentHost: string; currentPort: number }) {
  const run = useRunPreflight();
  const [host, setHost] = useState('');
  const [port, setPort] = useState('');
  return (
    <Card title="Preflight a host and port">
      <form
        className="form preflight-form"
        onSubmit={(e) => {
          e.preventDefault();
          run.mutate({ host: host.trim(), ...(port.trim() ? { port: Number(port) } : {}) });
        }}
      >
        <p className="muted small">
          What giving Secure Link another host or port would mean at the next restart: could it listen there, is the port free, would its identity
          still cover the name (or must every phone pair again). Read-only: nothing is written, rotated or restarted.
        </p>
        <div className="preflight-fields">
          <label className="field">
            <span>Host</span>
            <input
              value={host}
              onChange={(e) => setHost(e.target.value)}
              placeholder={currentHost}
              required
              maxLength={253}
              spellCheck={false}
              autoCapitalize="off"
              data-testid="preflight-host"
            />
          </label>
          <label className="field">
            <span>Port</span>
            <input
              value={port}
              onChange={(e) => setPort(e.target.value)}
              placeholder={String(currentPort)}
              inputMode="numeric"
              pattern="[0-9]{1,5}"
              data-testid="preflight-port"
            />
          </label>
          <Button type="submit" variant="primary" busy={run.isPending} data-testid="preflight-run">
            Check
          </Button>
        </div>
        <InlineError error={run.error} />
      </form>
      {run.data ? <PreflightResult r={run.data} /> : null}
    </Card>
  );
}

function PreflightResult({ r }: { r: PreflightAnswer }) {
  const tone = r.verdict === 'ready' ? 'good' : r.verdict === 'problems' ? 'bad' : 'waiting';
  const words =
    r.verdict === 'ready'
      ? 'Secure Link could serve phones there'
      : r.verdict === 'problems'
        ? 'Secure Link would not work there as it stands'
        : 'Some checks could not be told here';
  return (
    <div className="preflight-result" data-testid="preflight-result" data-verdict={r.verdict}>
      <div className={`status-banner ${tone}`} role="status">
        <strong>{words}</strong>
        <span className="mono">{r.candidate_url}</span>
      </div>
      <ul className="check-list">
        {r.checks.map((c) => (
          <li key={c.id} data-check={c.id} className={c.ok === false ? 'bad-text' : undefined}>
            <span
              className={`check-mark ${c.ok === true ? 'good-text' : c.ok === false ? 'bad-text' : 'muted'}`}
              aria-label={c.ok === null ? 'unknown' : c.ok ? 'passes' : 'fails'}
            >
              {MARK[String(c.ok) as keyof typeof MARK]}
            </span>
            <span className="strong">{LABEL[c.id] ?? c.id}</span>
            <span className={c.ok === false ? undefined : 'muted'}>{c.detail}</span>
          </li>
        ))}
      </ul>
      <p className="muted small">
        {r.restart_required ? 'A restart is needed to use it. ' : 'These are the settings in force. '}
        {r.re_pair_required ? 'Every phone paired through Secure Link would have to pair again. ' : ''}
        Checked in {r.took_ms} ms.
      </p>
    </div>
  );
}
