import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { epoch } from '@svc/domain';
import { Auth } from '../common/auth/auth';
import { SecretNameDto, SetSecretDto } from './secrets.dto';
import { SecretsService } from './secrets.service';

const at = (ms: number | null) => (ms === null ? null : epoch(new Date(ms)));

/**
 * The operator's secrets (console, `svc relay secrets`): names and times, never a value. Operator only: the
 * operator key or the console's sign-in, never a paired phone or an agent's bearer.
 */
@Controller('/console/api/secrets')
export class SecretsController {
  constructor(private readonly secrets: SecretsService) {}

  @Get()
  @Auth('operator')
  list() {
    return {
      ok: true,
      max: this.secrets.max,
      secrets: this.secrets.list().map((s) => ({ name: s.name, created: at(s.created), updated: at(s.updated), last_used: at(s.lastUsed) })),
    };
  }

  @Post()
  @Auth('operator')
  @HttpCode(200)
  async set(@Body() body: SetSecretDto) {
    const r = await this.secrets.set('operator', body.name, body.value);
    return { ok: true, name: body.name, replaced: r.replaced, seq: r.seq };
  }

  @Post('/forget')
  @Auth('operator')
  @HttpCode(200)
  async forget(@Body() body: SecretNameDto) {
    const r = await this.secrets.forget('operator', body.name);
    return { ok: true, name: body.name, keys: r.keys, seq: r.seq };
  }
}
