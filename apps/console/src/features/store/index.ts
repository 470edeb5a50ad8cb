import { IconStore } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { storeKey } from './api/get-store';
import { StorePage } from './components/store-page';

export const storeFeature: ConsoleFeature = {
  id: 'store',
  path: '/store',
  title: 'Store',
  icon: IconStore,
  Page: StorePage,
  // Every event moves the last seq and the size; the query key's prefix also refreshes the check's status.
  invalidate: [{ on: ['*'], queryKey: storeKey }],
};
