import { IconThreads } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { threadsKey } from './api/get-threads';
import { ThreadsPage } from './components/threads-page';

export const threadsFeature: ConsoleFeature = {
  id: 'threads',
  path: '/threads',
  title: 'Threads',
  icon: IconThreads,
  Page: ThreadsPage,
  invalidate: [
    {
      on: [
        'phone.message_posted',
        'phone.message_delivered',
        'phone.message_dropped',
        'phone.message_expired',
        'phone.message_cancelled',
        'phone.subscribed',
        'phone.unsubscribed',
        'phone.reply_received',
        'phone.replies_handed',
        'phone.backlog_flushed',
        'phone.disconnected',
        'notification.',
        'personal.',
        'relay.started',
      ],
      queryKey: threadsKey,
    },
  ],
};
