import { useCallback, useEffect, useMemo, useState } from 'react';
import type { ConsoleEvent } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Button, Card, EmptyState, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { IconPause, IconPlay } from '@/components/icons';
import { NO_FILTERS, hasFilters, matchesFilters, type EventFilters } from '@/lib/event-filter';
import { FAMILIES } from '@/lib/event-families';
import { actorLabel, family, summary } from '@/lib/event-summary';
import { useLive } from '@/lib/live-context';
import { navigate, useLocation } from '@/lib/router';
import { serverNow } from '@/lib/server-time';
import { useReplayEvents, useTailEvents } from '../api/get-events';
import { EventDrawer } from './event-drawer';

const RANGES = [
  { label: 'Any time', value: '' },
  { label: 'Last 15 min', value: '900' },
  { label: 'Last hour', value: '3600' },
  { label: 'Last 24 h', value: '86400' },
  { label: 'Last 7 days', value: '604800' },
];

function filtersFrom(params: URLSearchParams): EventFilters {
  const num = (k: string) => (params.get(k) ? Date.parse(params.get(k)!) : null);
  return {
    type: params.get('type') ?? '',
    device: params.get('device') ?? '',
    since: num('since'),
    until: num('until'),
  };
}

function toSearch(f: EventFilters, from: number | null): string {
  const q = new URLSearchParams();
  if (f.type) q.set('type', f.type);
  if (f.device) q.set('device', f.device);
  if (f.since !== null) q.set('since', new Date(f.since).toISOString());
  if (f.until !== null) q.set('until', new Date(f.until).toISOString());
  if (from !== null) q.set('from', String(from));
  const s = q.toString();
  return `/events${s ? `?${s}` : ''}`;
}

export function EventsPage() {
  const { params, search } = useLocation();
  const filters = useMemo(() => filtersFrom(new URLSearchParams(search)), [search]);
  const from = params.get('from') !== null && /^\d+$/.test(params.get('from')!) ? Number(params.get('from')) : null;
  const setFilters = useCallback((f: EventFilters, replayFrom: number | null = from) => navigate(toSearch(f, replayFrom), { replace: true }), [from]);

  const live = useLive();
  const tail = useTailEvents(filters, from === null);
  const replay = useReplayEvents(from, filters);
  /** Pause freezes the rows on screen (the live store may move on and drop its oldest events). */
  const [paused, setPaused] = useState<{ at: number; rows: ConsoleEvent[] } | null>(null);
  const [selected, setSelected] = useState<ConsoleEvent | null>(null);
  const [deviceDraft, setDeviceDraft] = useState(filters.device);
  const [typeDraft, setTypeDraft] = useState(filters.type);
  const [seqDraft, setSeqDraft] = useState('');
  const [rangeChoice, setRangeChoice] = useState('');
  // A new URL (Apply, a device link, Back) resets the drafts and ends a pause, in the same render.
  const [shownFor, setShownFor] = useState({ filters, from });
  if (shownFor.filters !== filters || shownFor.from !== from) {
    setShownFor({ filters, from });
    if (shownFor.filters.device !== filters.device) setDeviceDraft(filters.device);
    if (shownFor.filters.type !== filters.type) setTypeDraft(filters.type);
    setPaused(null);
  }

  const fetched = useMemo(() => tail.data?.pages.flatMap((p) => p.events) ?? [], [tail.data]);
  const newestFetched = fetched[0]?.seq ?? 0;
  const liveMatching = useMemo(
    () => live.events.filter((e) => e.seq > newestFetched && matchesFilters(e, filters)),
    [live.events, newestFetched, filters],
  );
  const liveRows = useMemo(() => [...liveMatching, ...fetched], [liveMatching, fetched]);
  const waiting = paused ? live.events.filter((e) => e.seq > paused.at && matchesFilters(e, filters)).length : 0;

  // The live store keeps only the newest 500 events. If more arrived since this page was fetched, the
  // hole between them is refetched instead of being shown as missing.
  const fetchedHead = tail.data?.pages[0]?.last_seq;
  const oldestLive = live.events.at(-1)?.seq;
  const gap = from === null && fetchedHead !== undefined && oldestLive !== undefined && oldestLive > fetchedHead + 1;
  useEffect(() => {
    if (gap && !paused && !tail.isFetching) void tail.refetch();
  }, [gap, paused, tail]);

  const rows: ConsoleEvent[] = from !== null ? (replay.data?.pages.flatMap((p) => p.events) ?? []) : paused ? paused.rows : liveRows;
  const knownTypes = useMemo(() => [...new Set([...live.events, ...fetched].map((e) => e.type))].sort(), [live.events, fetched]);
  const q = from === null ? tail : replay;
  const liveSeqs = useMemo(() => new Set(liveMatching.map((e) => e.seq)), [liveMatching]);

  const columns: Array<Column<ConsoleEvent>> = [
    {
      label: '#',
      render: (e) => (
        <button
          type="button"
          className="link-btn mono"
          onClick={(ev) => (ev.stopPropagation(), setSelected(e))}
          aria-label={`Event ${e.seq} details`}
        >
          {e.seq}
        </button>
      ),
    },
    {
      label: 'Time (UTC)',
      className: 'mono nowrap',
      cellProps: (e) => ({ title: e.at }),
      render: (e) => (
        <>
          {e.at.slice(5, 10)} {e.at.slice(11, 19)}
        </>
      ),
    },
    { label: 'Type', render: (e) => <span className={`type-tag fam-${family(e.type)}`}>{e.type}</span> },
    { label: 'Actor', className: 'col-opt nowrap', headClassName: 'col-opt', render: (e) => actorLabel(e.actor, e.type) },
    { label: 'What happened', className: 'event-text', render: (e) => summary(e) },
  ];

  const applyRange = (v: string) => {
    setRangeChoice(v);
    setFilters({
      ...filters,
      since: v ? serverNow() - Number(v) * 1000 : null,
      until: null,
    });
  };

  return (
    <>
      <PageHeader
        title="Events"
        subtitle={
          from === null ? 'The event log, newest first, live. Click a row for the full record.' : `Replaying from #${from + 1}, oldest first.`
        }
        actions={
          from === null ? (
            <Button
              onClick={() => setPaused(paused ? null : { at: live.lastSeq ?? 0, rows: liveRows })}
              aria-pressed={paused !== null}
              data-testid="pause"
            >
              {paused === null ? (
                <>
                  <IconPause /> Pause
                </>
              ) : (
                <>
                  <IconPlay /> Resume{waiting ? ` (${waiting} new)` : ''}
                </>
              )}
            </Button>
          ) : (
            <Button onClick={() => setFilters(filters, null)}>Back to the live tail</Button>
          )
        }
      />
      <Card className="filters-card">
        <div className="filters" role="search" aria-label="Filter events">
          <div className="family-chips" role="group" aria-label="Event family">
            {FAMILIES.map((f) => (
              <button
                key={f.label}
                type="button"
                className={`family-chip ${filters.type === f.value ? 'on' : ''}`}
                aria-pressed={filters.type === f.value}
                onClick={() => setFilters({ ...filters, type: f.value })}
              >
                {f.label}
              </button>
            ))}
          </div>
          <div className="filter-row">
            <form
              className="filter-fields"
              onSubmit={(e) => {
                e.preventDefault();
                setFilters({
                  ...filters,
                  type: typeDraft.trim(),
                  device: deviceDraft.trim(),
                });
              }}
            >
              <label className="field compact">
                <span>Type</span>
                <input
                  list="event-types"
                  value={typeDraft}
                  onChange={(e) => setTypeDraft(e.target.value)}
                  placeholder="session. or session.revoked"
                />
                <datalist id="event-types">
                  {knownTypes.map((t) => (
                    <option key={t} value={t} />
                  ))}
                </datalist>
              </label>
              <label className="field compact">
                <span>Device</span>
                <input
                  value={deviceDraft}
                  onChange={(e) => setDeviceDraft(e.target.value)}
                  placeholder="token prefix or device id"
                  data-testid="device-filter"
                />
              </label>
              <label className="field compact">
                <span>Time</span>
                <select value={rangeChoice} onChange={(e) => applyRange(e.target.value)}>
                  {RANGES.map((r) => (
                    <option key={r.value} value={r.value}>
                      {r.label}
                    </option>
                  ))}
                </select>
              </label>
              <Button type="submit" size="sm">
                Apply
              </Button>
              {hasFilters(filters) ? (
                <Button
                  size="sm"
                  variant="ghost"
                  onClick={() => {
                    setRangeChoice('');
                    setFilters(NO_FILTERS);
                  }}
                >
                  Clear filters
                </Button>
              ) : null}
            </form>
            <form
              className="filter-fields replay-form"
              onSubmit={(e) => {
                e.preventDefault();
                if (/^\d+$/.test(seqDraft)) setFilters(filters, Math.max(0, Number(seqDraft) - 1));
              }}
            >
              <label className="field compact">
                <span>Replay from seq</span>
                <input
                  inputMode="numeric"
                  pattern="\d*"
                  value={seqDraft}
                  onChange={(e) => setSeqDraft(e.target.value)}
                  placeholder={`1 – ${live.lastSeq ?? ''}`}
                  size={10}
                />
              </label>
              <Button type="submit" size="sm">
                Replay
              </Button>
            </form>
          </div>
        </div>
      </Card>
      {paused !== null ? (
        <div className="paused-bar" role="status">
          Paused at #{paused.at}. {waiting ? `${waiting} new event${waiting === 1 ? '' : 's'} waiting.` : 'No new events yet.'}{' '}
          <button type="button" className="link-btn" onClick={() => setPaused(null)}>
            Resume
          </button>
        </div>
      ) : null}
      <Card>
        {q.isError ? <ErrorState what="events" error={q.error} onRetry={() => void q.refetch()} /> : null}
        {q.isPending ? <Skeleton lines={8} height={22} /> : null}
        {q.isSuccess && rows.length === 0 ? (
          hasFilters(filters) ? (
            <EmptyState title="No events match these filters" action={<Button onClick={() => setFilters(NO_FILTERS)}>Clear filters</Button>}>
              Widen the time range or clear the type and device filters.
            </EmptyState>
          ) : (
            <EmptyState title="No events yet">The relay records every state change here as it happens.</EmptyState>
          )
        ) : null}
        {rows.length > 0 ? (
          <DataTable
            testId="events-table"
            layout="log"
            columns={columns}
            rows={rows}
            rowKey={(e) => e.seq}
            rowProps={(e) => ({
              className: `${liveSeqs.has(e.seq) ? 'row-new' : ''} ${selected?.seq === e.seq ? 'row-selected' : ''}`,
              onClick: () => setSelected(e),
              'data-type': e.type,
            })}
          />
        ) : null}
        {q.hasNextPage ? (
          <div className="load-more">
            <Button onClick={() => void q.fetchNextPage()} busy={q.isFetchingNextPage}>
              {from === null ? 'Load older events' : 'Load later events'}
            </Button>
          </div>
        ) : rows.length > 0 && q.isSuccess ? (
          <p className="muted small load-more">
            {from !== null
              ? 'Caught up with the log: switch back to the live tail to follow it.'
              : hasFilters(filters)
                ? 'No older events match.'
                : 'Start of the log.'}
          </p>
        ) : null}
      </Card>
      {selected ? (
        <EventDrawer
          event={selected}
          onClose={() => setSelected(null)}
          onFilterDevice={(d) => {
            setSelected(null);
            setFilters({ ...filters, device: d });
          }}
        />
      ) : null}
    </>
  );
}
