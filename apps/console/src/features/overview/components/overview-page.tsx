import { Link } from '@/lib/router';
import { EventList } from '@/components/event-list';
import { Button, Card, EmptyState, ErrorState, PageHeader, Skeleton, Stat } from '@/components/ui';
import { provenFrom } from '@/lib/chain-proof';
import { bytes, count, duration, exact, plural } from '@/lib/format';
import { useLive } from '@/lib/live-context';
import { useOverview } from '../api/get-overview';

export function OverviewPage() {
  const q = useOverview();
  const live = useLive();
  const o = q.data;

  return (
    <>
      <PageHeader title="Overview" subtitle="Is the relay healthy? Everything on this page follows the event stream live." />
      {q.isError && !o ? <ErrorState what="the overview" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {!o && q.isPending ? (
        <div className="stat-grid">
          {Array.from({ length: 8 }, (_, i) => (
            <div className="stat" key={i}>
              <Skeleton lines={2} height={16} />
            </div>
          ))}
        </div>
      ) : null}
      {o ? (
        <>
          {o.sessions === 0 ? (
            <div className="callout">
              <div>
                <strong>No phones paired yet.</strong> Mint a code and scan its QR with the app to pair one.
              </div>
              <Link to="/pairing" className="btn btn-primary btn-md">
                Pair a phone
              </Link>
            </div>
          ) : null}
          {o.rate_limit_blocks > 0 ? (
            <div className="callout callout-warn" role="status" data-testid="blocks-flag">
              <div>
                <strong>{plural(o.rate_limit_blocks, 'address', 'addresses')} blocked by the rate limiter</strong> after too many wrong pairing codes
                or session tokens. A phone behind {o.rate_limit_blocks === 1 ? 'it' : 'them'} cannot pair or connect until the block ends or you lift
                it.
              </div>
              <Link to="/pairing" className="btn btn-md">
                Review on Pairing →
              </Link>
            </div>
          ) : null}
          <div className="stat-grid" data-testid="overview-stats">
            <Stat label="Paired sessions" value={count(o.sessions)} hint={<Link to="/devices">Devices →</Link>} />
            <Stat
              label="Phones online"
              value={count(o.phones_online)}
              hint={o.sockets_online > o.phones_online ? `${o.sockets_online} sockets` : o.phones_online ? 'connected now' : 'none connected'}
              tone={o.phones_online ? 'good' : undefined}
            />
            <Stat
              label="Pending requests"
              value={count(o.pending_pairings)}
              hint={o.pending_pairings ? <Link to="/pairing">Review →</Link> : `${plural(o.ready_codes, 'code')} waiting for a phone`}
              tone={o.pending_pairings ? 'warn' : undefined}
            />
            <Stat label="Events / s" value={o.events_per_second.toFixed(1)} hint="durable, last 10 s" />
            <Stat
              label="Event log"
              value={`#${count(o.log.last_seq)}`}
              hint={
                o.log.store === 'postgres'
                  ? `${bytes(o.log.bytes)} in PostgreSQL (table svc_relay_events)`
                  : `${bytes(o.log.bytes)} in ${plural(o.log.segments, 'segment')}`
              }
            />
            <Stat
              label="Chain"
              tone={o.chain.state === 'verified' ? 'good' : 'bad'}
              value={o.chain.state === 'verified' ? <>✓ verified</> : <>✗ broken at #{o.chain.broken_at_seq}</>}
              hint={
                <>
                  {o.chain.state === 'verified' ? (
                    <span data-testid="overview-chain-from">{`${provenFrom(o.chain.from_seq, o.chain.cut)} up to #${count(o.chain.verified_to_seq)}`}</span>
                  ) : (
                    o.chain.reason
                  )}{' '}
                  <Link to="/store" data-testid="overview-verify">
                    verify from #1 →
                  </Link>
                </>
              }
            />
            {o.bridge ? (
              <Stat
                label="Bridge commands"
                value={count(o.bridge.commands_total)}
                hint={
                  <Link to="/bridge">
                    {o.bridge.stopped_by_safety} stopped by safety · {plural(o.bridge.devices, 'phone')} →
                  </Link>
                }
                tone={o.bridge.stopped_by_safety ? 'warn' : undefined}
              />
            ) : null}
            {o.media ? (
              <Stat label="Media" value={count(o.media.entries)} hint={<Link to="/media">{bytes(o.media.bytes)} registered →</Link>} />
            ) : null}
            {o.threads ? (
              <Stat
                label="Queued for the phone"
                value={count(o.threads.queued)}
                hint={
                  <Link to="/threads">
                    {!o.threads.enabled
                      ? 'Threads off (PHONE_ENABLED unset)'
                      : o.threads.subscribed
                        ? 'a phone is subscribed'
                        : 'no phone subscribed'}{' '}
                    →
                  </Link>
                }
                tone={o.threads.queued && !o.threads.subscribed ? 'warn' : undefined}
              />
            ) : null}
            <Stat label="Uptime" value={duration(o.uptime_seconds)} hint={<span title={exact(o.started_at * 1000)}>version {o.version}</span>} />
            <Stat
              label="Listening on"
              value={<span className="mono small-value">{`${o.listen.host}:${o.listen.port}`}</span>}
              hint={o.tls ? 'TLS on' : 'TLS off (plain ws://)'}
              tone={o.tls ? 'good' : undefined}
            />
          </div>
        </>
      ) : null}
      <Card
        title="Latest events"
        actions={
          <Link to="/events" className="btn btn-ghost btn-sm">
            Open the event log →
          </Link>
        }
      >
        {live.events.length ? (
          <EventList events={live.events.slice(0, 10)} />
        ) : o ? (
          <EmptyState title="No events yet">Events appear here as the relay records them.</EmptyState>
        ) : (
          <Skeleton lines={5} />
        )}
      </Card>
      <p className="footnote muted">
        Chain: every record's checksum and its link to the previous one, re-read incrementally from disk.{' '}
        <Button variant="ghost" size="sm" onClick={() => void q.refetch()}>
          Refresh now
        </Button>
      </p>
    </>
  );
}
