import { Body, Controller, Get, Patch } from '@nestjs/common';
import { Auth } from '../common/auth';
import { VoiceService } from './voice.service';

/** Spec 4.10: the runtime security toggles (loopback). GET reports; PATCH turns the API-bearer escape hatch on or off until restart. */
@Controller('/relay/security')
export class RelaySecurityController {
  constructor(private readonly voice: VoiceService) {}

  @Get()
  @Auth('loopback')
  get() {
    return this.voice.security();
  }

  @Patch()
  @Auth('loopback')
  patch(@Body() body: unknown) {
    return this.voice.setSecurity(body);
  }
}
