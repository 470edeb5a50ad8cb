import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { MetricsHistory } from './metrics-history';
import { MetricsService } from './metrics.service';

@Global()
@Module({ controllers: [MetricsController], providers: [MetricsService, MetricsHistory], exports: [MetricsService, MetricsHistory] })
export class MetricsModule {}
