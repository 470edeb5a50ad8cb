import { useState } from 'react';
import { Ago, Card, Chip, EmptyState, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { plural } from '@/lib/format';
import { useThreads } from '../api/get-threads';
import { Forgotten, ThreadDialog } from './thread-dialog';

export function ThreadsPage() {
  const q = useThreads();
  const t = q.data;
  const [open, setOpen] = useState<string | null>(null);
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
          {t.enabled ? (
            <div className="callout-plain" data-testid="threads-state">
              {t.subscriber ? (
                <>
                  <Chip tone="good">subscribed</Chip> <strong>{t.subscriber.device_name}</strong>{' '}
                  <span className="mono muted">{t.subscriber.token_prefix}</span> receives messages as they are posted (since{' '}
                  <Ago at={t.subscriber.since} />
                  ).
                </>
              ) : (
                <>
                  <Chip tone="warn">no phone subscribed</Chip> Messages wait in the queue (24 hours) until a phone subscribes to Threads.
                </>
              )}
            </div>
          ) : (
            <div className="callout callout-warn" role="status" data-testid="threads-state">
              <div>
                <strong>Threads is off on this relay.</strong> The agent cannot message the phone: <code>PHONE_ENABLED</code> is not set, so{' '}
                <code>POST /phone/message</code> is refused and nothing is queued. To turn it on, set <code>PHONE_ENABLED=1</code> in the relay&apos;s
                environment (or in <code>~/.svc/.env</code>) and restart the relay. Threads already kept and the phone&apos;s notifications still show
                below.
              </div>
            </div>
          )}
          {t.enabled || t.queued.length > 0 ? (
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
                          chat <span className="mono">{m.chat_id}</span> · posted <Ago at={m.posted_at} /> · expires <Ago at={m.expires_at} />
                        </div>
                      </div>
                    </li>
                  ))}
                </ul>
              )}
            </Card>
          ) : null}
          <div className="pairing-grid">
            <Card title="Threads">
              {t.threads.length === 0 ? (
                <EmptyState title="No threads yet">
                  {t.enabled
                    ? "A thread starts with the agent's first message to a chat."
                    : 'Threads start once PHONE_ENABLED=1 lets the agent message the phone.'}
                </EmptyState>
              ) : (
                <ul className="code-list" data-testid="thread-list">
                  {t.threads.map((th) => (
                    <li key={th.chat_id}>
                      <button
                        type="button"
                        className="link-btn strong thread-open"
                        onClick={() => setOpen(th.chat_id)}
                        aria-label={`Open thread ${th.title ?? th.chat_id}`}
                      >
                        {th.title ?? th.chat_id}
                      </button>
                      <span className="muted small">
                        {plural(th.messages, 'message')} · {plural(th.replies, 'reply', 'replies')}
                      </span>
                      <span className="code-expiry muted small">
                        <Ago at={th.last_activity} />
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
                      <span>{n.forgotten ? <Forgotten /> : (n.title ?? <span className="muted">no title</span>)}</span>
                      <span className="code-expiry muted small">
                        {n.device_name} · <Ago at={n.received_at} />
                      </span>
                    </li>
                  ))}
                </ul>
              )}
            </Card>
          </div>
        </>
      ) : null}
      <ThreadDialog chatId={open} onClose={() => setOpen(null)} />
    </>
  );
}
