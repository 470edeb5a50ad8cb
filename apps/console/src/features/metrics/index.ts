import { createElement, lazy, Suspense } from 'react';
import { IconMetrics } from '@/components/icons';
import { Skeleton } from '@/components/ui';
import type { ConsoleFeature } from '@/lib/feature';

// The charting library (uPlot, ~50 kB) loads with this page only, not with the console's first paint.
const MetricsPage = lazy(() => import('./components/metrics-page').then((m) => ({ default: m.MetricsPage })));

export const metricsFeature: ConsoleFeature = {
  id: 'metrics',
  path: '/metrics',
  title: 'Metrics',
  icon: IconMetrics,
  Page: () => createElement(Suspense, { fallback: createElement(Skeleton, { lines: 6, height: 24 }) }, createElement(MetricsPage)),
  // Sampled on the relay's clock, not driven by events: the page polls (get-metrics.ts).
  invalidate: [],
};
