import { useEffect, useRef } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { ChainStatus, VerifyJobView } from '@svc/console-api';
import { Ago, Button, Card, Chip, InlineError } from '@/components/ui';
import { cutNote, provenFrom } from '@/lib/chain-proof';
import { bytes, count, exact } from '@/lib/format';
import { storeKey } from '../api/get-store';
import { useStartVerify, useVerifyStatus } from '../api/verify-chain';

function elapsed(ms: number): string {
  return ms < 1000 ? `${Math.max(1, Math.round(ms))} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** The chain check: the incremental status the top bar shows, and the full re-read from #1 with its progress and verdict. */
export function VerifyCard({ chain, initial }: { chain: ChainStatus; initial: VerifyJobView | null }) {
  const status = useVerifyStatus();
  const start = useStartVerify();
  const qc = useQueryClient();
  const job = status.data ? status.data.job : initial;
  const running = job?.state === 'running';
  // When a check ends, the store's chain status may have changed with it.
  const was = useRef(running);
  useEffect(() => {
    if (was.current && !running) void qc.invalidateQueries({ queryKey: storeKey, exact: true });
    was.current = running;
  }, [running, qc]);

  return (
    <Card
      title="Chain check"
      actions={
        <Button size="sm" variant="primary" onClick={() => start.mutate()} busy={running || start.isPending} data-testid="verify-start">
          {running ? 'Verifying…' : 'Verify from #1'}
        </Button>
      }
    >
      <p data-testid="store-chain">
        {chain.state === 'verified' ? (
          <>
            <Chip tone="good">✓ verified</Chip> <span data-testid="store-chain-from">{provenFrom(chain.from_seq, chain.cut)}</span> up to #
            {count(chain.verified_to_seq)}, checked as records are written (each record&apos;s checksum and its link to the one before).
          </>
        ) : (
          <>
            <Chip tone="bad">✗ broken at #{count(chain.broken_at_seq)}</Chip> in <span className="mono">{chain.segment}</span>: {chain.reason}
          </>
        )}
      </p>
      {job ? (
        <JobLine job={job} />
      ) : (
        <p className="muted">A full check re-reads every record from #1; it runs in the background and shows its progress here.</p>
      )}
      <InlineError error={start.error} />
    </Card>
  );
}

function JobLine({ job }: { job: VerifyJobView }) {
  if (job.state === 'running') {
    const pct = job.up_to_seq ? Math.floor((job.records * 100) / job.up_to_seq) : 100;
    return (
      <div className="verify-progress" data-testid="verify-progress" data-job={job.id}>
        <progress max={Math.max(1, job.up_to_seq)} value={job.records} aria-label="Chain check progress" />
        <p>
          Verifying: <strong>{count(job.records)}</strong> of {count(job.up_to_seq)} records ({pct}%)
          {job.bytes_total !== null && job.bytes_done !== null ? ` · ${bytes(job.bytes_done)} of ${bytes(job.bytes_total)}` : ''} ·{' '}
          {elapsed(job.duration_ms)}
        </p>
      </div>
    );
  }
  const when = job.finished_at === null ? null : job.finished_at * 1000;
  const at =
    when === null ? null : (
      <>
        {' '}
        at {exact(when)} (<Ago at={job.finished_at} />)
      </>
    );
  return (
    <div className="verify-result" data-testid="verify-result" data-state={job.state} data-job={job.id} role="status">
      {job.state === 'verified' ? (
        <p>
          <Chip tone="good">✓ chain intact</Chip> <strong>{count(job.up_to_seq - (job.from_seq ?? 1) + 1)} records</strong>{' '}
          <span data-testid="verify-result-from">
            from #{job.from_seq ?? 1}
            {cutNote(job.cut)}
          </span>{' '}
          to #{count(job.up_to_seq)} proven in <strong>{elapsed(job.duration_ms)}</strong>
          {at}.
        </p>
      ) : job.state === 'broken' && job.broken ? (
        <p>
          <Chip tone="bad">✗ broken at #{count(job.broken.seq)}</Chip> in <span className="mono">{job.broken.segment}</span>: {job.broken.reason}.{' '}
          {count(job.records)} records before it are proven ({elapsed(job.duration_ms)}
          {at}). Every record from there on is unproven: restore the log from a backup, or keep this copy as evidence.
        </p>
      ) : job.state === 'cancelled' ? (
        <p>
          <Chip tone="warn">stopped</Chip> The relay stopped during the check, after {count(job.records)} of {count(job.up_to_seq)} records.
        </p>
      ) : (
        <p>
          <Chip tone="bad">failed</Chip> The check could not read the log: {job.error ?? 'unknown error'}.
        </p>
      )}
    </div>
  );
}
