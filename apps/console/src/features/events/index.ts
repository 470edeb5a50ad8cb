import { IconEvents } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { EventsPage } from './components/events-page';

export const eventsFeature: ConsoleFeature = {
  id: 'events',
  path: '/events',
  title: 'Events',
  icon: IconEvents,
  Page: EventsPage,
  // The log grows from the stream itself; nothing to refetch.
  invalidate: [],
};
