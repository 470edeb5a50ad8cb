import { Body, Controller, Delete, Get, Param, Patch } from '@nestjs/common';
import type { Principal } from '@svc/domain';
import { Auth, Caller } from '../common/auth/auth';
import { ShortenDto } from './sessions.dto';
import { SessionsService } from './sessions.service';

@Controller('/sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Get()
  @Auth('paired')
  list(@Caller() caller: Principal) {
    return { sessions: this.sessions.list(caller) };
  }

  @Delete('/:prefix')
  @Auth('paired')
  revoke(@Param('prefix') prefix: string, @Caller() caller: Principal) {
    return this.sessions.revoke(prefix, caller);
  }

  /** Ends the device's trusted-device renewal (its refresh token) and keeps its live session. */
  @Delete('/:prefix/trust')
  @Auth('operator-or-paired')
  endTrust(@Param('prefix') prefix: string, @Caller() caller: Principal) {
    return this.sessions.endTrust(prefix, caller);
  }

  @Patch('/:prefix')
  @Auth('paired')
  shorten(@Param('prefix') prefix: string, @Body() body: ShortenDto, @Caller() caller: Principal) {
    return this.sessions.shorten(prefix, caller, body);
  }
}
