import type { MetricsChart } from '@svc/console-api';
import { Card, EmptyState, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { TimeChart } from '@/components/time-chart';
import { bytes, duration } from '@/lib/format';
import { useMetrics } from '../api/get-metrics';
import './metrics-page.css';

const FORMATS: Record<MetricsChart['unit'], (v: number) => string> = {
  'req/s': (v) => `${v < 10 ? trim(v.toFixed(1)) : Math.round(v)}/s`,
  sockets: (v) => String(Math.round(v)),
  messages: (v) => String(Math.round(v)),
  ms: (v) => `${v < 1 ? trim(v.toFixed(2)) : v < 10 ? trim(v.toFixed(1)) : Math.round(v)} ms`,
  'per min': (v) => `${v < 10 ? trim(v.toFixed(1)) : Math.round(v)}/min`,
  'bytes/s': (v) => `${bytes(Math.round(v))}/s`,
};

/** What an empty chart means, in words: nothing happened, which is itself the answer. */
const QUIET: Record<MetricsChart['id'], string> = {
  http: 'No request answered yet.',
  sockets: 'No phone socket yet.',
  commit: 'No event committed yet.',
  bridge: 'No Device Control command or safety decision since the relay started.',
  media: 'No media served since the relay started.',
  threads: 'Nothing queued for the phone.',
};

/** What an interval without a value means, where that is not "nothing to draw" (a commit latency needs commits). */
const GAP: Partial<Record<MetricsChart['id'], string>> = { commit: 'no commits' };

/** A series the relay counts but keeps out of a chart's lines, in words, with its newest rate. */
function Apart({ chart, format }: { chart: MetricsChart; format: (v: number) => string }) {
  if (!chart.apart) return null;
  const newest = chart.apart.values.findLast((v) => v !== null) ?? 0;
  return (
    <p className="muted small chart-apart" data-testid={`apart-${chart.id}`}>
      Not drawn: requests to <code>/console</code> (this console&apos;s own polling and scripts using its API), {format(newest)} in the newest
      interval.
    </p>
  );
}

function trim(s: string): string {
  return s.replace(/\.0+$/, '');
}

export function MetricsPage() {
  const q = useMetrics();
  const m = q.data;
  return (
    <>
      <PageHeader
        title="Metrics"
        subtitle={
          m ? (
            <>
              The relay&apos;s own metrics, sampled every {m.interval_seconds} s over the last {duration(m.window_seconds)}, kept by the relay (a
              reload shows the whole window).
            </>
          ) : (
            "The relay's own metrics over the last minutes."
          )
        }
        actions={
          <a
            className="btn btn-default btn-sm"
            href={m?.metrics_url ?? '/console/api/metrics/prometheus'}
            target="_blank"
            rel="noreferrer"
            data-testid="metrics-link"
            title="What GET /metrics serves a scraper that sends the operator key"
          >
            Prometheus text ↗
          </a>
        }
      />
      {q.isError && !m ? <ErrorState what="the metrics" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {!m && q.isPending ? (
        <div className="chart-grid">
          {Array.from({ length: 6 }, (_, i) => (
            <Card key={i}>
              <Skeleton lines={4} height={24} />
            </Card>
          ))}
        </div>
      ) : null}
      {m ? (
        <>
          {m.times.length < 2 ? (
            <p className="callout-plain" data-testid="metrics-collecting">
              Collecting: the relay takes a sample every {m.interval_seconds} s, and a line needs two of them.
            </p>
          ) : null}
          <div className="chart-grid" data-testid="metrics-charts" data-samples={m.times.length}>
            {m.charts.map((c) => (
              <Card key={c.id} title={c.title} actions={<span className="muted small">{c.unit}</span>} className="chart-card">
                <div data-chart={c.id}>
                  {c.series.length === 0 ? (
                    <EmptyState title={QUIET[c.id]}>A line appears here once there is something to count.</EmptyState>
                  ) : (
                    <TimeChart
                      times={m.times}
                      series={c.series}
                      format={FORMATS[c.unit]}
                      integer={c.unit === 'sockets' || c.unit === 'messages'}
                      label={`${c.title}, ${c.unit}`}
                      gap={GAP[c.id]}
                    />
                  )}
                  <Apart chart={c} format={FORMATS[c.unit]} />
                </div>
              </Card>
            ))}
          </div>
          <p className="muted small">
            Rates are counted between two samples over the time that really passed; commit latency is the p50 and p99 of the commits in each interval,
            read from the same histogram as <code>svc_event_commit_seconds</code> (so within its buckets): a lone interval with commits is a point,
            and one without reads &quot;no commits&quot;. Device Control is per minute, being rare. Times are in your browser&apos;s locale and time
            zone.
          </p>
        </>
      ) : null}
    </>
  );
}
