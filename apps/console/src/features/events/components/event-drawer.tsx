import type { ConsoleEvent } from '@svc/console-api';
import { Button, CopyButton, Drawer } from '@/components/ui';
import { actorLabel, deviceOf, family, summary } from '@/lib/event-summary';
import { exact, relative } from '@/lib/format';
import { Link } from '@/lib/router';
import { serverNow } from '@/lib/server-time';

export function EventDrawer({
  event,
  onClose,
  onFilterDevice,
}: {
  event: ConsoleEvent;
  onClose: () => void;
  onFilterDevice: (prefix: string) => void;
}) {
  const device = deviceOf(event);
  const at = Date.parse(event.at);
  return (
    <Drawer
      onClose={onClose}
      title={
        <>
          <span className={`type-tag fam-${family(event.type)}`}>{event.type}</span> <span className="mono muted">#{event.seq}</span>
        </>
      }
    >
      <p className="drawer-summary">{summary(event)}</p>
      <dl className="facts">
        <dt>Seq</dt>
        <dd className="mono">{event.seq}</dd>
        <dt>Time</dt>
        <dd>
          {exact(at)} <span className="muted">({relative(at, serverNow())})</span>
        </dd>
        <dt>Actor</dt>
        <dd>{actorLabel(event.actor, event.type)}</dd>
        <dt>Event id</dt>
        <dd className="mono small">{event.id}</dd>
        <dt>Chain hash</dt>
        <dd className="mono small" title="first 12 hex characters of this record's SHA-256">
          {event.hash}…
        </dd>
      </dl>
      {device ? (
        <div className="drawer-links">
          <Link to={`/devices?focus=${device}`} className="btn btn-sm btn-default">
            Open device {device}
          </Link>
          <Button size="sm" variant="ghost" onClick={() => onFilterDevice(device)}>
            Only this device's events
          </Button>
        </div>
      ) : null}
      <div className="json-head">
        <h3>Data</h3>
        <CopyButton text={JSON.stringify(event, null, 2)} label="Copy as JSON" />
      </div>
      <pre className="json" data-testid="event-json">
        {JSON.stringify(event.data, null, 2)}
      </pre>
      <SealedNote data={event.data} />
      <p className="muted small">Digests are cut to 8 characters and secrets are never recorded; the full record is in the relay's log file.</p>
    </Drawer>
  );
}

/** A notification or Thread event: its personal content is never shown here, only whether it can still be read. */
function SealedNote({ data }: { data: Record<string, unknown> }) {
  const key = typeof data.sealedWith === 'string' ? <span className="mono">{data.sealedWith}</span> : 'its data key';
  if (data.content === 'sealed')
    return (
      <p className="small" data-testid="sealed-note">
        Its personal content (titles, texts, messages) is sealed in the record under {key} and never shown here. Forgetting it on the Devices page
        destroys that key.
      </p>
    );
  if (data.content === 'forgotten')
    return (
      <p className="small" data-testid="sealed-note">
        Its personal content was forgotten: {key}, which sealed it, is destroyed, so no one can read it again. The rest of the event stays.
      </p>
    );
  return null;
}
