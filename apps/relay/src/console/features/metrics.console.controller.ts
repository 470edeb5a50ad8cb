import { Controller, Get } from '@nestjs/common';
import type { MetricsView } from '@svc/console-api';
import { epoch } from '@svc/domain';
import { Auth } from '../../common/auth';
import { Clock } from '../../common/clock';
import { MetricsHistory } from '../../metrics/metrics-history';
import { ConsoleFeatures } from '../console-features';

/** Metrics page: the relay's own metrics sampled every 2 s for the last 10 minutes (metrics/metrics-history.ts). */
@Controller('/console/api/metrics')
export class MetricsConsoleController {
  constructor(
    features: ConsoleFeatures,
    private readonly history: MetricsHistory,
    private readonly clock: Clock,
  ) {
    features.add({ id: 'metrics', title: 'Metrics', order: 80 });
  }

  @Get()
  @Auth('loopback')
  view(): MetricsView {
    const { intervalMs, capacity } = this.history.sampler.opts;
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      interval_seconds: intervalMs / 1000,
      window_seconds: (intervalMs * capacity) / 1000,
      ...this.history.view(),
      metrics_url: '/metrics',
    };
  }
}
