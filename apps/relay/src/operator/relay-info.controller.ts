import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { Auth } from '../common/auth/auth';
import { ModelCapabilitiesDto, UpdateCheckQuery } from './relay-info.dto';
import { RelayInfoService } from './relay-info.service';

/**
 * `/relay/info`, `/relay/update-check`, `/relay/model-capabilities` (spec 4.10). The spec lists them as
 * loopback; the app also asks them from the phone with its session bearer (RelayHttpClient.fetchRelayInfo,
 * for its profile and capability view), so a paired session may read them too.
 */
@Controller('/relay')
export class RelayInfoController {
  constructor(private readonly relayInfo: RelayInfoService) {}

  /** The build and capability summary. Counts only: never a token, path or credential. */
  @Get('/info')
  @Auth('platform-or-paired')
  info() {
    return this.relayInfo.info();
  }

  /** `GET /relay/update-check[?refresh=1]`: the update feed's answer, or `unknown` without one. */
  @Get('/update-check')
  @Auth('operator-or-paired')
  updateCheck(@Query() q: UpdateCheckQuery) {
    return this.relayInfo.updateCheck(q.refresh === true);
  }

  /**
   * `POST /relay/model-capabilities` (spec 4.10, 2.5): loopback, or a paired phone with an active `chat`
   * grant (the clients fail soft on anything else).
   */
  @Post('/model-capabilities')
  @Auth('operator-or-paired', 'chat')
  @HttpCode(200)
  capabilities(@Body() body: ModelCapabilitiesDto) {
    return this.relayInfo.modelCapabilities(body);
  }
}
