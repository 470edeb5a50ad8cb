import { Body, Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import type { ApproveAnswer, DenyAnswer, MintAnswer, PairingView } from '@svc/console-api';
import { epoch, requireCode, type Principal } from '@svc/domain';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import type { RelayConfig } from '../../common/config/relay-config';
import { CommandLoop } from '../../common/loop/command-loop';
import { Secrets } from '../../common/auth/secrets';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../../common/auth/tokens';
import { describePairing, PairingService } from '../../pairing/pairing.service';
import { ConsoleFeatures } from '../console-features';
import { ConsoleApproveDto, ConsoleDenyDto, ConsoleMintDto } from './console.dto';

const OPERATOR: Principal = { kind: 'operator' };

/**
 * Pairing page: live codes and pending public requests (never a code itself, only the first 8
 * characters of its digest as a reference), and mint / approve / deny through PairingService.
 */
@Controller('/console/api/pairing')
export class PairingConsoleController {
  constructor(
    private readonly pairing: PairingService,
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly secrets: Secrets,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {
    features.add({ id: 'pairing', title: 'Pairing', order: 20 });
  }

  @Get()
  @Auth('operator')
  list(): PairingView {
    const now = this.clock.now();
    const codes = this.loop.models.pairing
      .live(now)
      .toSorted((a, b) => b.registeredAt - a.registeredAt)
      .map((c) => ({
        code_ref: c.codeDigest.slice(0, 8),
        ...describePairing(c),
        session_ttl_seconds: c.terms?.sessionTtlSeconds ?? null,
        grants: c.terms ? Object.keys(c.terms.grants) : null,
      }));
    return {
      ok: true,
      server_time: epoch(now.getTime()),
      tls: this.config.tls !== null,
      secure_link: Boolean(this.runtime.secureLink),
      pending: codes.filter((c) => c.state === 'pending'),
      ready: codes.filter((c) => c.state === 'ready'),
    };
  }

  /** Same as `POST /pairing/mint`, plus `code_ref` so the page can tell when this code is used. */
  @Post('/mint')
  @Auth('operator')
  @HttpCode(200)
  async mint(@Body() body: ConsoleMintDto): Promise<MintAnswer> {
    const minted = await this.pairing.mint(body);
    return { ...minted, code_ref: this.secrets.digest(requireCode(minted.code)).slice(0, 8) };
  }

  @Post('/approve')
  @Auth('operator')
  @HttpCode(200)
  approve(@Body() body: ConsoleApproveDto): Promise<ApproveAnswer> {
    const { request_id, ...terms } = body;
    return this.pairing.approve({ request_id }, terms, OPERATOR);
  }

  @Post('/deny')
  @Auth('operator')
  @HttpCode(200)
  deny(@Body() body: ConsoleDenyDto): Promise<DenyAnswer> {
    return this.pairing.deny({ request_id: body.request_id }, OPERATOR);
  }
}
