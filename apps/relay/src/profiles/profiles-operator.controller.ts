import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { actorOf, DomainError, type Principal } from '@svc/domain';
import { Auth, Caller } from '../common/auth/auth';
import { ProfileCatalog } from './profile-catalog.service';
import { RELAY_PLUGIN } from './profile-relay-plugin';
import { EnableProfilesDto } from './profiles.dto';

/**
 * The operator's side of profile enablement (loopback): what `svc relay profiles list|enable` asks a
 * running relay, so the change is written by the log's one writer and recorded (`profile.relay_enabled`).
 */
@Controller('/relay/profiles')
export class ProfilesOperatorController {
  constructor(private readonly catalog: ProfileCatalog) {}

  @Get()
  @Auth('operator')
  async list() {
    await this.catalog.rescan('rescan');
    return {
      ok: true,
      plugin: RELAY_PLUGIN,
      profiles: this.catalog
        .all()
        .map((p) => ({ profile: p.name, state: p.relay, readable: p.row !== null, file: this.catalog.layout.configOf(p.name) })),
      offered: this.catalog.rows().map((r) => r.name),
    };
  }

  @Post('/enable')
  @Auth('operator')
  @HttpCode(200)
  async enable(@Body() body: EnableProfilesDto, @Caller() caller: Principal) {
    const names = body.names ?? [];
    if (names.length === 0 && body.all !== true)
      throw new DomainError('validation_failed', 'invalid', 'name the profiles to enable, or send "all": true');
    const known = new Set(this.catalog.layout.names());
    const unknown = names.filter((n) => !known.has(n));
    if (unknown.length)
      throw new DomainError(
        'profile.not_found',
        'not_found',
        `no profile ${unknown.map((n) => JSON.stringify(n.slice(0, 64))).join(', ')} (known: ${[...known].join(', ') || 'none'})`,
      );
    const dryRun = body.dry_run === true;
    const results = await this.catalog.enable(body.all === true ? [] : names, dryRun, actorOf(caller));
    return {
      ok: results.every((r) => !r.error),
      action: 'enable',
      dry_run: dryRun,
      results: results.map((r) => ({
        profile: r.profile,
        path: r.file,
        was: r.was,
        changed: r.changed,
        ...(r.backup ? { backup: r.backup } : {}),
        ...(r.error ? { error: r.error } : {}),
      })),
    };
  }
}
