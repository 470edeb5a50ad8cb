import { Body, Controller, Get, HttpCode, Inject, Param, Post, Res } from '@nestjs/common';
import { DomainError, epoch } from '@svc/domain';
import type {
  ProfileEnableAnswer,
  ProfileMemoryView,
  ProfileRescanAnswer,
  ProfileSoulView,
  ProfilesView,
  ProfileWriteAnswer,
  RelayPluginStateView,
} from '@svc/console-api';
import type { FastifyReply } from 'fastify';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import type { RelayConfig } from '../../common/config/relay-config';
import { RELAY_CONFIG } from '../../common/auth/tokens';
import { ProfileCatalog } from '../../profiles/profile-catalog.service';
import { ProfilesService } from '../../profiles/profiles.service';
import { ConsoleFeatures } from '../console-features';
import { profileRowView, profileWriteView } from './profiles-view';
import { MemoryFileParam, ProfileNameParam, ProfileWriteDto } from './voice-profiles.dto';

/** Every write is the operator's: loopback only, no bearer (the auth hook refuses anything else). */
const OPERATOR = 'operator';

/**
 * Profiles page: the catalog as phones see it (ProfileCatalog's last scan), each profile's relay
 * enablement, its SOUL and memory (through ProfilesService, the phone routes' own reads and If-Match
 * writes: an edit is `profile.file_written` with the operator as actor), the writes and enablements the
 * log holds, a rescan and the enablement `svc relay profiles enable` makes.
 */
@Controller('/console/api/profiles')
export class ProfilesConsoleController {
  constructor(
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly catalog: ProfileCatalog,
    private readonly profiles: ProfilesService,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {
    features.add({ id: 'profiles', title: 'Profiles', order: 44 });
  }

  @Get()
  @Auth('operator')
  view(): ProfilesView {
    const m = this.loop.models.profiles;
    const offered = new Set(this.catalog.rows().map((r) => r.name));
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      discovery: this.config.profileDiscovery,
      changed_at: epoch(m.changedAt),
      offered: m.offered,
      home: this.config.svcHome,
      profiles: this.catalog.all().map((p) => profileRowView(p, offered.has(p.name), this.catalog.layout.configOf(p.name))),
      writes: m
        .writes()
        .toSorted((a, b) => b.at - a.at)
        .map(profileWriteView),
      enablements: m
        .enablements()
        .toSorted((a, b) => b.at - a.at)
        .map((x) => ({ profile: x.profile, was: x.was, at: epoch(x.at), actor: x.actor })),
    };
  }

  /** Looks at the profile tree now (as the 30 s rescan does); a change is `profile.catalog_changed`. */
  @Post('/rescan')
  @Auth('operator')
  @HttpCode(200)
  async rescan(): Promise<ProfileRescanAnswer> {
    await this.catalog.rescan('rescan');
    return { ok: true, profiles: this.catalog.all().length, offered: this.catalog.rows().length };
  }

  /** `svc relay profiles enable <name>`: the relay's plugin added to the profile's config (`profile.relay_enabled`). */
  @Post('/:name/enable')
  @Auth('operator')
  @HttpCode(200)
  async enable(@Param() p: ProfileNameParam): Promise<ProfileEnableAnswer> {
    if (!this.catalog.layout.names().includes(p.name))
      throw new DomainError('profile.not_found', 'not_found', `no profile "${p.name}" with a config file`, { profile: p.name });
    const [r] = await this.catalog.enable([p.name], false, OPERATOR);
    if (r.error) throw new DomainError('profile.config_unwritable', 'conflict', r.error, { profile: p.name });
    return { ok: true, profile: p.name, was: r.was as RelayPluginStateView, changed: r.changed, backup: r.backup ?? null };
  }

  @Get('/:name/soul')
  @Auth('operator')
  soul(@Param() p: ProfileNameParam): ProfileSoulView {
    const s = this.profiles.soul(p.name);
    return {
      ok: true,
      profile: p.name,
      soul: {
        path: s.path,
        content: s.content,
        exists: s.exists,
        size_bytes: s.size_bytes,
        truncated: s.truncated,
        shown_bytes: this.config.profileFiles.soulMaxBytes,
        etag: s.etag ?? null,
      },
    };
  }

  @Get('/:name/memory')
  @Auth('operator')
  memory(@Param() p: ProfileNameParam): ProfileMemoryView {
    const m = this.profiles.memory(p.name, { etags: true });
    return {
      ok: true,
      profile: p.name,
      entries: m.entries.map((e) => ({
        filename: e.filename,
        path: e.path,
        content: e.content,
        exists: true,
        size_bytes: e.size_bytes,
        truncated: e.truncated,
        shown_bytes: e.shown_bytes ?? 0,
        etag: e.etag ?? null,
      })),
    };
  }

  /**
   * SOUL.md, with the ETag it was read with (or null: it did not exist); 412 `profile.stale` when it changed
   * since. The body limits of both writes follow the caps (profiles/profile-write-limits.ts).
   */
  @Post('/:name/soul')
  @Auth('operator')
  @HttpCode(200)
  async putSoul(@Param() p: ProfileNameParam, @Body() body: ProfileWriteDto): Promise<ProfileWriteAnswer> {
    const r = await this.profiles.putSoul(p.name, body.content, body.if_match, OPERATOR);
    return { ...r.body, ok: true, etag: r.etag };
  }

  @Post('/:name/memory/:filename')
  @Auth('operator')
  @HttpCode(200)
  async putMemory(@Param() p: MemoryFileParam, @Body() body: ProfileWriteDto): Promise<ProfileWriteAnswer> {
    const r = await this.profiles.putMemory(p.name, p.filename, body.content, body.if_match, OPERATOR);
    return { ok: true, profile: r.body.profile, path: r.body.path, bytes_written: r.body.bytes_written, etag: r.etag };
  }

  /** The avatar phones get (`GET /api/profiles/{name}/avatar`), for the catalog's thumbnail. */
  @Get('/:name/avatar')
  @Auth('operator')
  avatar(@Param() p: ProfileNameParam, @Res({ passthrough: true }) reply: FastifyReply): Buffer {
    const { bytes, headers } = this.profiles.avatar(p.name);
    void reply.headers({ ...headers, 'cache-control': 'no-store' });
    return bytes;
  }
}
