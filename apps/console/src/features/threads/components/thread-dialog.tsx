import type { ThreadEntryRow } from '@svc/console-api';
import { Ago, Chip, Dialog, ErrorState, Skeleton } from '@/components/ui';
import { plural } from '@/lib/format';
import { useThread } from '../api/get-thread';

const STATE_TONE: Record<string, 'good' | 'warn' | 'bad' | 'neutral'> = {
  delivered: 'good',
  queued: 'warn',
  dropped: 'bad',
  expired: 'bad',
  cancelled: 'neutral',
};

/** One thread read in order: the agent's messages (with their delivery state) and the phone's replies. */
export function ThreadDialog({ chatId, onClose }: { chatId: string | null; onClose: () => void }) {
  const q = useThread(chatId);
  const t = q.data;
  return (
    <Dialog open={chatId !== null} title={t?.title ?? chatId ?? 'Thread'} onClose={onClose}>
      {q.isPending ? <Skeleton lines={4} /> : null}
      {q.isError ? <ErrorState what="this thread" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {t ? (
        <>
          <p className="muted small">
            chat <span className="mono">{t.chat_id}</span> · {plural(t.messages, 'message')} · {plural(t.replies, 'reply', 'replies')}
            {t.older > 0 ? ` · the ${plural(t.older, 'oldest entry', 'oldest entries')} are no longer kept here (the event log has them)` : ''}
          </p>
          {t.entries.length === 0 ? (
            <p className="muted">Nothing in this thread is kept any more.</p>
          ) : (
            <ol className="thread" data-testid="thread-entries">
              {t.entries.map((e) => (
                <Entry key={`${e.kind}-${e.id}`} entry={e} />
              ))}
            </ol>
          )}
        </>
      ) : null}
    </Dialog>
  );
}

function Entry({ entry: e }: { entry: ThreadEntryRow }) {
  if (e.kind === 'message')
    return (
      <li className="thread-entry thread-message" data-kind="message">
        <div className="thread-meta muted small">
          agent · <Ago at={e.at} /> <Chip tone={STATE_TONE[e.state] ?? 'neutral'}>{e.state}</Chip>
          {e.delivered_to ? (
            <>
              {' '}
              to <span className="mono">{e.delivered_to}</span>
            </>
          ) : null}
        </div>
        {e.title ? <div className="strong">{e.title}</div> : null}
        <div className="thread-text">{e.forgotten ? <Forgotten /> : e.text}</div>
      </li>
    );
  return (
    <li className="thread-entry thread-reply" data-kind="reply">
      <div className="thread-meta muted small">
        {e.device_name} (<span className="mono">{e.token_prefix}</span>) · <Ago at={e.at} />
      </div>
      <div className="thread-text">{e.forgotten ? <Forgotten /> : e.text}</div>
    </li>
  );
}

/** Content sealed under a data key the operator (or retention) destroyed: the rest of the entry stays. */
export function Forgotten() {
  return (
    <em className="muted" data-testid="forgotten" title="sealed under a data key that was destroyed: it can never be read again">
      forgotten
    </em>
  );
}
