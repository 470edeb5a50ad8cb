import type { ConsoleFeature } from '@/lib/feature';
import { IconOverview } from '@/components/icons';
import { overviewKey } from './api/get-overview';
import { OverviewPage } from './components/overview-page';

export const overviewFeature: ConsoleFeature = {
  id: 'overview',
  path: '/',
  title: 'Overview',
  icon: IconOverview,
  Page: OverviewPage,
  invalidate: [{ on: ['*'], queryKey: overviewKey }],
};
