import { Ago, Card, Chip, EmptyState, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { useThreads } from '../api/get-threads';

const ms = (s: number | null) => (s === null ? null : s * 1000);

export function ThreadsPage() {
  const q = useThreads();
  const t = q.data;
  return (
    <>
      <PageHeader
        title="Threads"
        subtitle="Messages the agent sends to the phone, what waits in the 24-hour queue, and the phone's recent notifications."
      />
      {q.isError ? <ErrorState what="Threads" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.isPending ? <Skeleton lines={6} height={20} /> : null}
      {t ? (
        <>
          <div className="callout-plain">
            {t.subscriber ? (
              <>
                <Chip tone="good">subscribed</Chip> <strong>{t.subscriber.device_name}</strong>{' '}
                <span className="mono muted">{t.subscriber.token_prefix}</span> receives messages as they are posted (since{' '}
                <Ago ms={ms(t.subscriber.since)} />
                ).
              </>
            ) : (
              <>
                <Chip tone="warn">no phone subscribed</Chip> Messages wait in the queue (24 hours) until a phone subscribes to Threads.
              </>
            )}
          </div>
          <Card title={`Queued messages${t.queued.length ? ` (${t.queued.length})` : ''}`}>
            {t.queued.length === 0 ? (
              <EmptyState title="Nothing queued">Messages posted while no phone is subscribed wait here, oldest first.</EmptyState>
            ) : (
              <ul className="request-list">
                {t.queued.map((m) => (
                  <li key={m.message_id} className="request">
                    <div className="request-who">
                      <div className="strong">{m.title ?? m.chat_id}</div>
                      <div className="small">{m.text}</div>
                      <div className="muted small">
                        chat <span className="mono">{m.chat_id}</span> · posted <Ago ms={ms(m.posted_at)} /> · expires <Ago ms={ms(m.expires_at)} />
                      </div>
                    </div>
                  </li>
                ))}
              </ul>
            )}
          </Card>
          <div className="pairing-grid">
            <Card title="Threads">
              {t.threads.length === 0 ? (
                <EmptyState title="No threads yet">A thread starts with the agent's first message to a chat.</EmptyState>
              ) : (
                <ul className="code-list">
                  {t.threads.map((th) => (
                    <li key={th.chat_id}>
                      <span className="strong">{th.title ?? th.chat_id}</span>
                      <span className="muted small">
                        {th.messages} message{th.messages === 1 ? '' : 's'} · {th.replies} repl{th.replies === 1 ? 'y' : 'ies'}
                      </span>
                      <span className="code-expiry muted small">
                        <Ago ms={ms(th.last_activity)} />
                      </span>
                    </li>
                  ))}
                </ul>
              )}
            </Card>
            <Card title="Recent notifications">
              {t.notifications.length === 0 ? (
                <EmptyState title="No notifications">
                  Phones that share their notifications list them here (the latest 100 are kept until the relay restarts).
                </EmptyState>
              ) : (
                <ul className="code-list">
                  {t.notifications.map((n) => (
                    <li key={n.entry_id}>
                      <span className="mono small">{n.package_name}</span>
                      <span>{n.title ?? <span className="muted">no title</span>}</span>
                      <span className="code-expiry muted small">
                        {n.device_name} · <Ago ms={ms(n.received_at)} />
                      </span>
                    </li>
                  ))}
                </ul>
              )}
            </Card>
          </div>
        </>
      ) : null}
    </>
  );
}
