import { Fragment, useState } from 'react';
import { Ago, Button, Card, Chip, EmptyState, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { bytes } from '@/lib/format';
import { useMedia } from '../api/get-media';
import { isPreviewable } from '../api/media-preview';
import { MediaPreview } from './media-preview';

const ms = (s: number | null) => (s === null ? null : s * 1000);

export function MediaPage() {
  const q = useMedia();
  const m = q.data;
  /** Token prefixes whose preview is open. */
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (ref: string) =>
    setOpen((prev) => {
      const next = new Set(prev);
      if (!next.delete(ref)) next.add(ref);
      return next;
    });
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
                  <Fragment key={e.token_prefix}>
                    <tr>
                      <td data-label="Name" className="col-device">
                        <div className="strong">
                          {e.name} {e.sensitive ? <Chip tone="warn">sensitive</Chip> : null}
                        </div>
                        <div className="muted mono small" title={e.path}>
                          {e.token_prefix} · {e.source}
                          {e.owned ? ' · owned' : ''}
                        </div>
                        {isPreviewable(e.content_type, e.size) ? (
                          <Button
                            size="sm"
                            variant="ghost"
                            className="media-preview-toggle"
                            aria-expanded={open.has(e.token_prefix)}
                            aria-controls={`media-preview-${e.token_prefix}`}
                            onClick={() => toggle(e.token_prefix)}
                          >
                            {open.has(e.token_prefix) ? 'Hide preview' : 'Preview'}
                          </Button>
                        ) : null}
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
                    {open.has(e.token_prefix) ? (
                      <tr id={`media-preview-${e.token_prefix}`}>
                        <td colSpan={6} data-label="Preview">
                          <MediaPreview tokenPrefix={e.token_prefix} name={e.name} />
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </Card>
    </>
  );
}
