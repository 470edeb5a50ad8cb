import { Ago, Card, Chip, EmptyState, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { bytes } from '@/lib/format';
import { useMedia } from '../api/get-media';

const ms = (s: number | null) => (s === null ? null : s * 1000);

export function MediaPage() {
  const q = useMedia();
  const m = q.data;
  return (
    <>
      <PageHeader
        title="Media"
        subtitle={
          m
            ? `${m.count} entr${m.count === 1 ? 'y' : 'ies'}, ${bytes(m.bytes)}. Tokens expire on their own and the registry empties when the relay restarts.`
            : 'Files registered for phones to fetch by token.'
        }
      />
      {q.isError ? <ErrorState what="the media registry" error={q.error} onRetry={() => void q.refetch()} /> : null}
      <Card>
        {q.isPending ? <Skeleton lines={4} height={22} /> : null}
        {m && m.entries.length === 0 ? (
          <EmptyState title="No media registered">
            Files registered with POST /media/register, uploaded by a phone, or shared by a relay feature appear here until they expire.
          </EmptyState>
        ) : null}
        {m && m.entries.length > 0 ? (
          <div className="table-wrap">
            <table className="table responsive" data-testid="media-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Size</th>
                  <th scope="col">Age</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Fetches</th>
                </tr>
              </thead>
              <tbody>
                {m.entries.map((e) => (
                  <tr key={e.token_prefix}>
                    <td data-label="Name" className="col-device">
                      <div className="strong">
                        {e.name} {e.sensitive ? <Chip tone="warn">sensitive</Chip> : null}
                      </div>
                      <div className="muted mono small" title={e.path}>
                        {e.token_prefix} · {e.source}
                        {e.owned ? ' · owned' : ''}
                      </div>
                    </td>
                    <td data-label="Type" className="mono small">
                      {e.content_type}
                    </td>
                    <td data-label="Size" className="nowrap">
                      {bytes(e.size)}
                    </td>
                    <td data-label="Age">
                      <Ago ms={ms(e.registered_at)} />
                    </td>
                    <td data-label="Expires">
                      <Ago ms={ms(e.expires_at)} />
                    </td>
                    <td data-label="Fetches">
                      {e.fetch_count}
                      {e.last_fetched_at ? (
                        <div className="muted small">
                          last <Ago ms={ms(e.last_fetched_at)} />
                        </div>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </Card>
    </>
  );
}
