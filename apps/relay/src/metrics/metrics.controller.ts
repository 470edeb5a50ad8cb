import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Auth } from '../common/auth/auth';
import { MetricsService } from './metrics.service';

/** `GET /metrics` (loopback): the Prometheus text format, for the operator's monitoring on this host. */
@Controller('/metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Auth('operator')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    void reply.header('content-type', this.metrics.contentType).header('cache-control', 'no-store');
    return this.metrics.render();
  }
}
