import { Body, Controller, Get, Patch } from '@nestjs/common';
import { Auth } from '../common/auth/auth';
import { BodyKeys } from './body-keys';
import { RelaySecurity } from './relay-security.service';
import { SecurityPatch } from './voice.dto';

/** Spec 4.10: the runtime security toggles (loopback). GET reports; PATCH turns the API-bearer escape hatch on or off until restart. */
@Controller('/relay/security')
export class RelaySecurityController {
  constructor(private readonly security: RelaySecurity) {}

  @Get()
  @Auth('platform')
  get() {
    return this.security.state();
  }

  @Patch()
  @Auth('platform')
  patch(@Body() body: SecurityPatch, @BodyKeys() sent: string[]) {
    return this.security.change(body, sent);
  }
}
