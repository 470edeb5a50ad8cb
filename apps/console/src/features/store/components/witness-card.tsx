import { Card, Chip, InlineError, Skeleton } from '@/components/ui';
import { count, exact } from '@/lib/format';
import { useWitnesses } from '../api/witnesses';

/**
 * The transparency log's witnesses (issue 39): for each, the newest checkpoint it cosigned and its newest
 * refusal, which means a witness off this host saw a log inconsistent with one it cosigned before.
 */
export function WitnessCard() {
  const w = useWitnesses();
  const v = w.data;
  return (
    <Card title="Witnesses">
      <p className="muted">
        Witnesses on other machines cosign this relay&apos;s checkpoints (<code>GET /log/checkpoint</code>) only when the log is consistent with the
        one they cosigned before. A refusal means one of them saw this log rewritten, truncated or rewound.
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
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Card>
  );
}
