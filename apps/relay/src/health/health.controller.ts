import { Controller, Get, Header } from '@nestjs/common';
import { Auth } from '../common/auth';
import { Clock } from '../common/clock';
import { EventLog } from '../common/event-log';
import { RUNTIME, type Runtime } from '../common/tokens';
import { Inject } from '@nestjs/common';

@Controller()
export class HealthController {
  constructor(
    private readonly log: EventLog,
    private readonly clock: Clock,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {}

  /** Public probe (spec 4.1): no credential, nothing secret. */
  @Get('/health')
  @Auth('public')
  @Header('Cache-Control', 'no-store')
  health() {
    return {
      status: 'ok',
      version: this.runtime.version,
      clients: this.log.models.connections.count(),
      sessions: this.log.models.sessions.count(this.clock.now()),
    };
  }
}
