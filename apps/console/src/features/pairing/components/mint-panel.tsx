import { useState } from 'react';
import { Button, Card, CopyButton, InlineError } from '@/components/ui';
import { useLive } from '@/lib/live-context';
import { Link } from '@/lib/router';
import { useServerNow } from '@/lib/server-time';
import { useClearMinted, useMintCode, useMinted, type Minted } from '../api/mint-code';
import { Countdown } from './countdown';
import { QrCode } from './qr-code';
import { GRANT_PRESETS, TTL_OPTIONS, defaultTtl, ttlLabel } from './terms';

/** `secureLink`: Secure Link serves phones, so the QR carries its pinned TLS route (a secure transport). */
export function MintPanel({ tls, secureLink }: { tls: boolean; secureLink: boolean }) {
  const minted = useMinted().data ?? null;
  // Keyed by the transport: the lifetime pre-selection follows it once the relay has said which it is.
  return minted ? <MintedCode minted={minted} /> : <MintForm key={`${tls}-${secureLink}`} tls={tls} secureLink={secureLink} />;
}

function transportHint(tls: boolean, secureLink: boolean): string {
  if (secureLink) return 'Secure Link (pinned TLS) serves phones: 30 days suggested.';
  return tls ? 'Secure transport (TLS): 30 days suggested.' : 'Plain ws:// transport: 7 days suggested.';
}

function MintForm({ tls, secureLink }: { tls: boolean; secureLink: boolean }) {
  const mint = useMintCode();
  const [ttl, setTtl] = useState<number>(defaultTtl(tls || secureLink));
  const [preset, setPreset] = useState('all');
  const [hint, setHint] = useState('');
  const chosen = GRANT_PRESETS.find((p) => p.id === preset)!;

  return (
    <Card title="Pair a phone" className="mint-card">
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          mint.mutate({
            ttl_seconds: ttl,
            ...(chosen.grants ? { grants: chosen.grants } : {}),
            ...(hint.trim() ? { transport_hint: hint.trim() } : {}),
          });
        }}
      >
        <fieldset className="field">
          <legend>Session lifetime</legend>
          <div className="segmented" role="radiogroup" aria-label="Session lifetime">
            {TTL_OPTIONS.map((o) => (
              <label key={o.seconds} className={ttl === o.seconds ? 'on' : undefined}>
                <input type="radio" name="ttl" value={o.seconds} checked={ttl === o.seconds} onChange={() => setTtl(o.seconds)} />
                {o.label}
              </label>
            ))}
          </div>
          <span className="field-hint" data-testid="transport-hint">
            {transportHint(tls, secureLink)}
          </span>
        </fieldset>
        <label className="field">
          <span>Grants</span>
          <select value={preset} onChange={(e) => setPreset(e.target.value)}>
            {GRANT_PRESETS.map((p) => (
              <option key={p.id} value={p.id}>
                {p.label}
              </option>
            ))}
          </select>
          <span className="field-hint">{chosen.hint}; every grant is clamped to the session.</span>
        </label>
        <label className="field">
          <span>Transport label (optional)</span>
          <input
            value={hint}
            onChange={(e) => setHint(e.target.value)}
            placeholder="e.g. tailscale, lan"
            maxLength={32}
            pattern="[A-Za-z0-9_.:\-]{1,32}"
          />
        </label>
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={mint.isPending} data-testid="mint">
            Mint a pairing code
          </Button>
          <span className="muted small">The code works once, for 10 minutes.</span>
        </div>
        <InlineError error={mint.error} />
      </form>
    </Card>
  );
}

function MintedCode({ minted }: { minted: Minted }) {
  const live = useLive();
  const clear = useClearMinted();
  const now = useServerNow(1000) / 1000;
  const consumed = live.events.find((e) => e.type === 'pairing.code_consumed' && String(e.data.codeDigest ?? '').startsWith(minted.code_ref));
  const expired =
    !consumed &&
    (now >= minted.expires_at ||
      live.events.some((e) => e.type === 'pairing.code_expired' && String(e.data.codeDigest ?? '').startsWith(minted.code_ref)));
  const preset = GRANT_PRESETS.find((p) => JSON.stringify(p.grants) === JSON.stringify(minted.terms.grants));
  const secureLink = minted.endpoints?.find((e) => e.role === 'plugin_proxy');
  const secureLinkUrl = secureLink && typeof secureLink.proxy === 'object' ? (secureLink.proxy as { url?: unknown }).url : null;

  return (
    <Card
      title="Scan with the svc app"
      className="mint-card"
      actions={
        <Button size="sm" onClick={clear}>
          {consumed || expired ? 'Pair another phone' : 'Discard'}
        </Button>
      }
    >
      <div className={`minted ${consumed || expired ? 'minted-done' : ''}`}>
        <div className="qr-frame">
          <QrCode text={minted.qr_payload} label="Pairing QR code" />
          {consumed || expired ? <div className="qr-veil">{consumed ? '✓ used' : 'expired'}</div> : null}
        </div>
        <div className="minted-info">
          {consumed ? (
            <div className="status-banner good" role="status">
              Paired: <strong>{String(consumed.data.deviceId)}</strong> now holds session{' '}
              <span className="mono">{String(consumed.data.tokenPrefix)}</span>.{' '}
              <Link to={`/devices?focus=${String(consumed.data.tokenPrefix)}`}>See the device →</Link>
            </div>
          ) : expired ? (
            <div className="status-banner bad" role="status">
              This code expired unused. Mint a new one.
            </div>
          ) : (
            <div className="status-banner waiting" role="status">
              <span className="pulse" aria-hidden /> Waiting for the phone · expires in <Countdown expiresAt={minted.expires_at} total={600} />
            </div>
          )}
          {minted.warning && !consumed && !expired ? (
            <p className="warn-text small" role="alert" data-testid="qr-warning">
              {minted.warning}
            </p>
          ) : null}
          <div className="code-label muted small">Pairing code (for typing it in by hand)</div>
          <div className="code-big mono" aria-label={`Pairing code ${minted.code.split('').join(' ')}`} data-testid="pairing-code">
            {minted.code}
          </div>
          {!consumed && !expired ? <Countdown expiresAt={minted.expires_at} total={600} bar /> : null}
          <label className="field">
            <span>Pairing link</span>
            <div className="input-row">
              <input readOnly value={minted.pairing_url} className="mono" data-testid="pairing-url" onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={minted.pairing_url} />
            </div>
          </label>
          <dl className="facts">
            <dt>Relay</dt>
            <dd className="mono">{minted.relay_url}</dd>
            {typeof secureLinkUrl === 'string' ? (
              <>
                <dt>Secure Link</dt>
                <dd>
                  <span className="mono">{secureLinkUrl}</span> <span className="muted small">pinned TLS, tried first</span>
                </dd>
              </>
            ) : null}
            <dt>Lifetime</dt>
            <dd>{ttlLabel(minted.terms.ttl_seconds)}</dd>
            <dt>Grants</dt>
            <dd>{preset?.label ?? 'custom'}</dd>
            {minted.terms.transport_hint ? (
              <>
                <dt>Transport</dt>
                <dd>{minted.terms.transport_hint}</dd>
              </>
            ) : null}
          </dl>
          <p className="muted small">Anyone holding this code or QR can pair within its lifetime: show it only to the phone you mean.</p>
        </div>
      </div>
    </Card>
  );
}
