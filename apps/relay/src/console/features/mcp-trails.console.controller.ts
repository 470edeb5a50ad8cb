import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import type { TrailsView, TrailView } from '@svc/console-api';
import { DomainError, epoch } from '@svc/domain';
import type { FastifyReply } from 'fastify';
import { BridgeService } from '../../bridge/bridge.service';
import { Auth } from '../../common/auth/auth';
import { RELAY_CONFIG } from '../../common/auth/tokens';
import type { RelayConfig } from '../../common/config/relay-config';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import { Matches } from '../../common/http/validators';
import { MediaService } from '../../media/media.service';
import { decodePng } from '../../bridge/bridge-media';
import { screenImage } from '../../mcp/screen-image';
import { trailRow, trailSteps, type TrailLookups } from './trail-views';

class TrailParam {
  @Matches(/^[0-9a-f]{12}$/, { message: 'an MCP session is named by 12 hex digits (as /console/api/bridge/trails lists it)' })
  session!: string;
}

class ThumbnailParam {
  @Matches(/^[A-Za-z0-9_-]{8}$/, { message: 'a media reference is its 8-character token prefix' })
  ref!: string;
}

/** A thumbnail's long side: a phone-width list shows a few per screen. */
export const THUMBNAIL_SIDE = 240;

/**
 * The Bridge page's playback of MCP sessions (issue 40, item 6): the recent sessions, one session's steps with
 * their screen evidence and the session's screenshots nearest each step, and those screenshots as small
 * JPEG thumbnails while their media lives. Operator only, like the rest of the Bridge page.
 */
@Controller('/console/api/bridge/trails')
export class McpTrailsConsoleController {
  constructor(
    private readonly bridge: BridgeService,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly media: MediaService,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  @Get()
  @Auth('operator')
  list(): TrailsView {
    const look = this.lookups();
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      evidence: this.config.bridge.evidence,
      trails: this.loop.models.bridge.trails.list().map((t) => trailRow(t, look)),
    };
  }

  @Get('/thumbnail/:ref')
  @Auth('operator')
  async thumbnail(@Param() p: ThumbnailParam, @Res() reply: FastifyReply): Promise<void> {
    const { bytes } = await this.media.previewBytes(p.ref);
    const png = decodePng({ png_base64: bytes.toString('base64') });
    if (typeof png === 'string') throw new DomainError('media.not_previewable', 'unsupported', 'only a screenshot (PNG) has a thumbnail here');
    const { data } = await screenImage(bytes, png, { maxSide: THUMBNAIL_SIDE, format: 'jpeg', quality: 70 });
    await reply
      .header('content-type', 'image/jpeg')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'")
      .header('cross-origin-resource-policy', 'same-origin')
      .send(data);
  }

  @Get('/:session')
  @Auth('operator')
  trail(@Param() p: TrailParam): TrailView {
    const t = this.loop.models.bridge.trails.get(p.session);
    if (!t)
      throw new DomainError('bridge.unknown_trail', 'not_found', 'no recent MCP session by that name (the relay keeps RELAY_MCP_TRAILS of them)');
    const look = this.lookups();
    return { ok: true, server_time: epoch(this.clock.now().getTime()), trail: trailRow(t, look), steps: trailSteps(t, look) };
  }

  private lookups(): TrailLookups {
    const m = this.loop.models;
    const live = new Set(m.media.live(this.clock.now()).map((e) => e.tokenPrefix));
    return {
      deviceName: (prefix) => m.sessions.byTokenPrefix(prefix)?.deviceName ?? null,
      shotMedia: (requestId) => {
        const ref = this.bridge.shotOf(requestId);
        return ref !== null && live.has(ref) ? ref : null;
      },
    };
  }
}
