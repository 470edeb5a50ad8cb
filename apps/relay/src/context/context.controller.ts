import { Controller, Get, Header } from '@nestjs/common';
import { Auth } from '../common/auth/auth';
import { ContextService } from './context.service';

@Controller('/context')
export class ContextController {
  constructor(private readonly context: ContextService) {}

  /** Loopback without a bearer (the host platform reads what to inject); a paired bearer otherwise. */
  @Get('/injected')
  @Auth('platform-or-paired')
  @Header('Cache-Control', 'no-store')
  injected() {
    return this.context.injected();
  }
}
