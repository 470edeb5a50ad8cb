import { Card, Chip, InlineError, Skeleton } from '@/components/ui';
import { count, exact } from '@/lib/format';
import { useWitnesses, type WitnessesView } from '../api/witnesses';

/**
 * The transparency log's witnesses (issue 39): for each, the newest checkpoint it cosigned and its newest
 * refusal, which means a witness off this host saw a log inconsistent with one it cosigned before.
 */
export function WitnessCard() {
  const w = useWitnesses();
  const v = w.data;
  const pushing = v?.witnesses.some((x) => x.push !== null) ?? false;
  return (
    <Card title="Witnesses">
      <p className="muted">
        Witnesses on other machines cosign this relay&apos;s checkpoints (<code>GET /log/checkpoint</code>) only when the log is consistent with the
        one they cosigned before. A refusal means one of them saw this log rewritten, truncated or rewound. Witnesses listed in{' '}
        <code>RELAY_WITNESS_URLS</code> are sent each new checkpoint by the relay (C2SP tlog-witness); the others fetch it themselves.
      </p>
      <InlineError error={w.error} />
      {w.isPending ? <Skeleton lines={2} height={18} /> : null}
      {v && v.configured.length === 0 && v.witnesses.length === 0 ? (
        <p className="small muted" data-testid="witnesses-none">
          No witness is configured: list their verifier keys in <code>RELAY_WITNESS_VKEYS</code> (docs/AUDITING.md).
        </p>
      ) : null}
      {v && v.witnesses.length > 0 ? (
        <table className="witness-table" data-testid="witnesses">
          <thead>
            <tr>
              <th>Witness</th>
              <th>Newest cosigned checkpoint</th>
              <th>Refusal</th>
              {pushing ? <th>Submissions</th> : null}
            </tr>
          </thead>
          <tbody>
            {v.witnesses.map((x) => (
              <tr key={`${x.name}+${x.key_hash}`} data-testid="witness-row">
                <td className="mono">{x.name}</td>
                <td>
                  {x.cosigned ? (
                    <>
                      <Chip tone="good">✓ cosigned</Chip> tree {count(x.cosigned.size)} at {exact(x.cosigned.time * 1000)}
                      <div className="small muted mono">root {x.cosigned.root}</div>
                    </>
                  ) : (
                    <span className="muted">none yet</span>
                  )}
                </td>
                <td>
                  {x.refusal ? (
                    <div role="alert" data-testid="witness-refusal">
                      <Chip tone="bad">refused</Chip> tree {count(x.refusal.size)} at {exact(x.refusal.time * 1000)}
                      <div className="small">{x.refusal.reason}</div>
                    </div>
                  ) : (
                    <span className="muted">none</span>
                  )}
                </td>
                {pushing ? (
                  <td data-testid="witness-push">
                    <PushCell push={x.push} />
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Card>
  );
}

type Push = NonNullable<WitnessesView['witnesses'][number]['push']>;

/** The relay's submissions to one witness: what it answered last, and when the relay tries again after a failure. */
function PushCell({ push }: { push: Push | null }) {
  if (push === null) return <span className="muted">fetches itself</span>;
  const tone = ({ ok: 'good', pending: 'neutral', error: 'warn', refused: 'bad' } as const)[push.state];
  const label = { ok: '✓ answered', pending: 'not sent yet', error: 'failed', refused: 'refused' }[push.state];
  return (
    <div role={push.state === 'refused' ? 'alert' : undefined}>
      <Chip tone={tone}>{label}</Chip>
      {push.at !== null ? <> at {exact(push.at)}</> : null}
      <div className="small muted mono">{push.url}</div>
      {push.message ? <div className="small">{push.message}</div> : null}
      {push.next_at !== null ? (
        <div className="small muted">
          next try at {exact(push.next_at)} ({count(push.failures)} in a row)
        </div>
      ) : null}
    </div>
  );
}
