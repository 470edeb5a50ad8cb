import { Body, Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import type { ForgetAnswer, PersonalDataDevice, PersonalDataView } from '@svc/console-api';
import { epoch, isSecretKey } from '@svc/domain';
import { parsePersonalKeyId } from '@svc/events';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import { checkBefore, checkDevice, keysToForget, type ForgetRequest } from '../../personal/forget';
import { PersonalDataService } from '../../personal/personal-data.service';
import { ForgetDto } from '../../personal/personal-data.dto';
import type { RelayConfig } from '../../common/config/relay-config';
import { RELAY_CONFIG } from '../../common/auth/tokens';

/**
 * Personal content (Devices page): whose content is sealed under how many data keys, the forgettings, and
 * forgetting by device or time. Never the content, never a key.
 */
@Controller('/console/api/personal-data')
export class PersonalDataConsoleController {
  constructor(
    private readonly personal: PersonalDataService,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  @Get()
  @Auth('operator')
  view(): PersonalDataView {
    const ids = this.personal.keys?.ids() ?? [];
    const sessions = this.loop.models.sessions;
    const devices = new Map<string, PersonalDataDevice>();
    for (const id of ids) {
      const k = parsePersonalKeyId(id);
      // A named secret's keys are the secrets section's (svc relay secrets), not a device's content.
      if (!k || isSecretKey(id)) continue;
      const hour = Math.floor(k.hourStart / 1000);
      const d = devices.get(k.device);
      if (d) {
        d.keys++;
        d.oldest_hour = Math.min(d.oldest_hour, hour);
        d.newest_hour = Math.max(d.newest_hour, hour);
      } else
        devices.set(k.device, {
          device: k.device,
          device_name: sessions.byTokenPrefix(k.device)?.deviceName ?? null,
          keys: 1,
          oldest_hour: hour,
          newest_hour: hour,
        });
    }
    return {
      ok: true,
      server_time: epoch(this.clock.now()),
      store: this.loop.storeKind,
      where: this.personal.keys?.where ?? 'none',
      retention_days: this.config.personalDataRetentionDays,
      keys: ids.length,
      devices: [...devices.values()].sort((a, b) => b.newest_hour - a.newest_hour),
      forgettings: this.loop.models.personalData.recent().map((f) => ({ ...f, at: epoch(f.at) })),
    };
  }

  @Post('/forget')
  @Auth('operator')
  @HttpCode(200)
  async forget(@Body() body: ForgetDto): Promise<ForgetAnswer> {
    const req: ForgetRequest = {
      scope: body.device ? 'device' : 'before',
      device: body.device ? checkDevice(body.device) : null,
      before: body.before ? checkBefore(body.before) : null,
    };
    if (body.dry_run) {
      const ids = this.personal.keys?.ids() ?? [];
      const keys = req.device || req.before ? keysToForget(ids, req, this.loop.models.personalData).length : 0;
      return { ok: true, keys, seq: null, dry_run: true };
    }
    const answer = await this.personal.forget('operator', req);
    return { ...answer, dry_run: false };
  }
}
