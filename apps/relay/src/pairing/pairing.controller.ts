import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { DomainError, type Principal } from '@svc/domain';
import { Auth, Caller, PeerIp } from '../common/auth/auth';
import { ApproveDto, DenyDto, MintDto, PublicPairingDto, RegisterCodeDto } from './pairing.dto';
import { PairingService } from './pairing.service';

@Controller('/pairing')
export class PairingController {
  constructor(private readonly pairing: PairingService) {}

  /** Public, rate-limited: a pending code that works only once the operator approves it. */
  @Post()
  @Auth('public')
  @HttpCode(200)
  request(@Body() body: PublicPairingDto, @PeerIp() ip: string) {
    return this.pairing.request(ip, body.device_name?.trim() || null);
  }

  @Post('/register')
  @Auth('platform')
  @HttpCode(200)
  async register(@Body() body: RegisterCodeDto) {
    const { code, expires_at } = await this.pairing.register(body.code, body);
    return { ok: true, code, expires_at };
  }

  @Post('/mint')
  @Auth('platform')
  @HttpCode(200)
  mint(@Body() body: MintDto) {
    return this.pairing.mint(body);
  }

  @Post('/approve')
  @Auth('operator')
  @HttpCode(200)
  approve(@Body() body: ApproveDto, @Caller() by: Principal) {
    return this.pairing.approve(requireRef(body), body, by);
  }

  @Post('/deny')
  @Auth('operator')
  @HttpCode(200)
  deny(@Body() body: DenyDto, @Caller() by: Principal) {
    return this.pairing.deny(requireRef(body), by);
  }

  @Get('/pending')
  @Auth('operator')
  pending() {
    return { ok: true, codes: this.pairing.pending() };
  }
}

function requireRef(body: { code?: string; request_id?: string }) {
  if (!body.code && !body.request_id) throw new DomainError('validation.missing_ref', 'invalid', 'give request_id or code');
  return { code: body.code, request_id: body.request_id };
}
