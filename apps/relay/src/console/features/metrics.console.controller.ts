import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { MetricsView } from '@svc/console-api';
import { epoch } from '@svc/domain';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import { MetricsHistory } from '../../metrics/metrics-history';
import { MetricsService } from '../../metrics/metrics.service';
import { ConsoleFeatures } from '../console-features';

/** Metrics page: the relay's own metrics sampled every 2 s for the last 10 minutes (metrics/metrics-history.ts). */
@Controller('/console/api/metrics')
export class MetricsConsoleController {
  constructor(
    features: ConsoleFeatures,
    private readonly history: MetricsHistory,
    private readonly metrics: MetricsService,
    private readonly clock: Clock,
  ) {
    features.add({ id: 'metrics', title: 'Metrics', order: 80 });
  }

  @Get()
  @Auth('operator')
  view(): MetricsView {
    const { intervalMs, capacity } = this.history.sampler.opts;
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      interval_seconds: intervalMs / 1000,
      window_seconds: (intervalMs * capacity) / 1000,
      ...this.history.view(),
      // The page's own copy of GET /metrics: the browser's console cookie (Path=/console) is its credential there.
      metrics_url: '/console/api/metrics/prometheus',
    };
  }

  /** The Prometheus text, as `GET /metrics` serves a scraper that sends the operator key. */
  @Get('/prometheus')
  @Auth('operator')
  async prometheus(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    void reply.header('content-type', this.metrics.contentType);
    return this.metrics.render();
  }
}
