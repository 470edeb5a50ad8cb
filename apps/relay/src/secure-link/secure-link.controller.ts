import { Controller, Get, Query } from '@nestjs/common';
import { Auth } from '../common/auth/auth';
import { SecureLinkPreflight } from './secure-link-preflight';
import { PreflightQuery } from './secure-link.dto';

/** `GET /secure-link/preflight[?host=&port=]` (spec 4.1, loopback, read-only): see SecureLinkPreflight. */
@Controller('/secure-link')
export class SecureLinkController {
  constructor(private readonly preflight: SecureLinkPreflight) {}

  @Get('/preflight')
  @Auth('operator')
  check(@Query() q: PreflightQuery) {
    return this.preflight.check(q.host ?? null, q.port ?? null);
  }
}
