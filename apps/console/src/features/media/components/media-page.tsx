import { useState } from 'react';
import type { MediaRow } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Ago, Button, Card, Chip, EmptyState, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { bytes } from '@/lib/format';
import { useMedia } from '../api/get-media';
import { isPreviewable } from '../api/media-preview';
import { MediaPreview } from './media-preview';

/**
 * Where an entry came from, in words (the registry's `source`): `register` is the host's
 * POST /media/register, `registrar` a relay feature registering a host file for a phone (a Device
 * Control share, a MEDIA: marker in a message), `upload` a phone's POST /media/upload.
 */
function sourceWords(source: string): string {
  if (source === 'register') return 'registered by the agent host';
  if (source === 'registrar') return 'shared by the relay (Device Control, a message)';
  if (source === 'upload') return 'uploaded by a phone';
  return source;
}

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

  const columns: Array<Column<MediaRow>> = [
    {
      label: 'Name',
      className: 'col-device',
      render: (e) => (
        <>
          <div className="strong">
            {e.name} {e.sensitive ? <Chip tone="warn">sensitive</Chip> : null}
          </div>
          <div className="muted small" title={e.path} data-testid="media-source">
            <span className="mono">{e.token_prefix}</span> · {sourceWords(e.source)}
            {e.owned ? ' · the relay deletes the file when the entry goes' : ''}
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
        </>
      ),
    },
    { label: 'Type', className: 'mono small', render: (e) => e.content_type },
    { label: 'Size', className: 'nowrap', render: (e) => bytes(e.size) },
    { label: 'Age', render: (e) => <Ago at={e.registered_at} /> },
    { label: 'Expires', render: (e) => <Ago at={e.expires_at} /> },
    {
      label: 'Fetches',
      render: (e) => (
        <>
          {e.fetch_count}
          {e.last_fetched_at ? (
            <div className="muted small">
              last <Ago at={e.last_fetched_at} />
            </div>
          ) : null}
        </>
      ),
    },
  ];
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
            Files the agent host registered (POST /media/register), a phone uploaded, or a relay feature shared with a phone (a Device Control share,
            a MEDIA: marker) appear here until they expire.
          </EmptyState>
        ) : null}
        {m && m.entries.length > 0 ? (
          <DataTable
            testId="media-table"
            columns={columns}
            rows={m.entries}
            rowKey={(e) => e.token_prefix}
            after={(e) =>
              open.has(e.token_prefix) ? (
                <tr id={`media-preview-${e.token_prefix}`}>
                  <td colSpan={columns.length} data-label="Preview">
                    <MediaPreview tokenPrefix={e.token_prefix} name={e.name} />
                  </td>
                </tr>
              ) : null
            }
          />
        ) : null}
      </Card>
    </>
  );
}
