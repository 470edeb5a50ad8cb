import { Controller, Get, Param, Res } from '@nestjs/common';
import type { MediaView } from '@svc/console-api';
import type { FastifyReply } from 'fastify';
import * as path from 'node:path';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import { MediaService } from '../../media/media.service';
import { ConsoleFeatures } from '../console-features';
import { epoch } from '@svc/domain';

/** Media page: the registry (spec 2.4) by token prefix; the host path is shown to the operator only. */
@Controller('/console/api/media')
export class MediaConsoleController {
  constructor(
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly media: MediaService,
  ) {
    features.add({ id: 'media', title: 'Media', order: 35 });
  }

  @Get()
  @Auth('operator')
  view(): MediaView {
    const now = this.clock.now();
    const entries = this.loop.models.media.live(now).toSorted((a, b) => b.registeredAt - a.registeredAt);
    return {
      ok: true,
      server_time: epoch(now.getTime()),
      count: entries.length,
      bytes: entries.reduce((n, e) => n + e.size, 0),
      entries: entries.map((e) => ({
        token_prefix: e.tokenPrefix,
        name: e.fileName ?? path.basename(e.path),
        path: e.path,
        content_type: e.contentType,
        size: e.size,
        sensitive: e.sensitive,
        owned: e.owned,
        source: e.source,
        registered_at: epoch(e.registeredAt),
        expires_at: epoch(e.expiresAt),
        fetch_count: e.fetchCount,
        last_fetched_at: epoch(e.lastFetchedAt),
      })),
    };
  }

  /**
   * Inline image preview by the entry's `token_prefix` (never the token or the path in the URL).
   * The media service opens it as a token fetch would; nothing is recorded (PROTOCOL.md).
   */
  @Get('/:ref/preview')
  @Auth('operator')
  preview(@Param('ref') ref: string, @Res() reply: FastifyReply) {
    return this.media.preview(ref, reply);
  }
}
