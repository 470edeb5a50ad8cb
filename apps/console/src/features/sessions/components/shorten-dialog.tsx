import { useEffect, useState } from 'react';
import type { SessionRow } from '@svc/console-api';
import { Button, Dialog, InlineError } from '@/components/ui';
import { duration } from '@/lib/format';
import { serverNow } from '@/lib/server-time';
import { useShortenSession } from '../api/shorten-session';

const CHOICES = [
  { label: '1 hour', seconds: 3600 },
  { label: '1 day', seconds: 86400 },
  { label: '7 days', seconds: 7 * 86400 },
  { label: '30 days', seconds: 30 * 86400 },
  { label: '90 days', seconds: 90 * 86400 },
];

/** Only choices shorter than what is left are offered: the relay's rule is reduction only. */
function shorterThan(untilEpoch: number | null, nowS: number) {
  return CHOICES.filter((c) => untilEpoch === null || nowS + c.seconds < untilEpoch);
}

export function ShortenDialog({ session, onClose }: { session: SessionRow | null; onClose: () => void }) {
  const shorten = useShortenSession();
  const [ttl, setTtl] = useState('keep');
  const [grants, setGrants] = useState<Record<string, string>>({});
  // Another device's dialog starts from a clean form (in the same render) and without the last one's error.
  const [formFor, setFormFor] = useState(session?.token_prefix);
  if (formFor !== session?.token_prefix) {
    setFormFor(session?.token_prefix);
    setTtl('keep');
    setGrants({});
  }
  const { reset } = shorten;
  useEffect(() => reset(), [reset, session?.token_prefix]);
  const nowS = serverNow() / 1000;
  const changed = ttl !== 'keep' || Object.values(grants).some((v) => v !== 'keep');

  const submit = () => {
    if (!session) return;
    const body: { prefix: string; ttl_seconds?: number; grants?: Record<string, number | false> } = { prefix: session.token_prefix };
    if (ttl !== 'keep') body.ttl_seconds = Number(ttl);
    const g: Record<string, number | false> = {};
    for (const [ch, v] of Object.entries(grants)) if (v !== 'keep') g[ch] = v === 'remove' ? false : Number(v);
    if (Object.keys(g).length) body.grants = g;
    shorten.mutate(body, { onSuccess: onClose });
  };

  return (
    <Dialog
      open={session !== null}
      title={`Shorten ${session?.device_name ?? ''}`}
      onClose={onClose}
      footer={
        <>
          <Button onClick={onClose}>Cancel</Button>
          <Button variant="primary" disabled={!changed} busy={shorten.isPending} onClick={submit}>
            Apply
          </Button>
        </>
      }
    >
      {session ? (
        <div className="form">
          <p className="muted">Lifetimes and grants only shrink here. Extending one needs a fresh pairing, which the operator approves.</p>
          <label className="field">
            <span>Session lifetime</span>
            <select value={ttl} onChange={(e) => setTtl(e.target.value)}>
              <option value="keep">Keep ({session.expires_at === null ? 'never expires' : `${duration(session.expires_at - nowS)} left`})</option>
              {shorterThan(session.expires_at, nowS).map((c) => (
                <option key={c.seconds} value={c.seconds}>
                  {c.label} from now
                </option>
              ))}
            </select>
          </label>
          <fieldset className="field">
            <legend>Grants</legend>
            {Object.entries(session.grants)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([ch, until]) => (
                <label className="grant-row" key={ch}>
                  <span className="mono">{ch}</span>
                  <select
                    value={grants[ch] ?? 'keep'}
                    onChange={(e) => setGrants((g) => ({ ...g, [ch]: e.target.value }))}
                    aria-label={`${ch} grant`}
                  >
                    <option value="keep">Keep ({until === null ? 'as long as the session' : `${duration(until - nowS)} left`})</option>
                    {shorterThan(until, nowS).map((c) => (
                      <option key={c.seconds} value={c.seconds}>
                        {c.label} from now
                      </option>
                    ))}
                    <option value="remove">Remove this grant</option>
                  </select>
                </label>
              ))}
          </fieldset>
          <InlineError error={shorten.error} />
        </div>
      ) : null}
    </Dialog>
  );
}
