import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { actorOf, clientNames, type Principal } from '@svc/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Auth, Caller } from '../common/auth/auth';
import type { RelayConfig } from '../common/config/relay-config';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { rewriteMediaMarkers } from './media-marker-rewrite';
import { MarkersDto, MediaByPathQuery, RegisterMediaDto } from './media.dto';
import { MediaService } from './media.service';

/** Spec 4.4. Static paths (`inspect`, `by-path`, `register`, `upload`) win over `/:token` in the router. */
@Controller('/media')
export class MediaController {
  constructor(
    private readonly media: MediaService,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  @Post('/register')
  @Auth('platform')
  @HttpCode(200)
  async register(@Body() body: RegisterMediaDto, @Caller() caller: Principal) {
    const r = await this.media.register(body, actorOf(caller));
    return { ok: true, token: r.token, expires_at: r.expiresAt, sensitive: r.sensitive };
  }

  /** Both forms (WIRE.md), by Content-Type: multipart `file`, or JSON with base64 `content`. */
  @Post('/upload')
  @Auth('paired', undefined, { multipart: true })
  @HttpCode(200)
  upload(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Caller() caller: Principal) {
    return req.isMultipart() ? this.media.uploadMultipart(req, reply, actorOf(caller)) : this.media.uploadJson(req.body, actorOf(caller));
  }

  @Get('/inspect')
  @Auth('platform')
  inspect(@Query('token') token?: string) {
    return this.media.inspect(token);
  }

  @Get('/by-path')
  @Auth('paired')
  byPath(@Query() q: MediaByPathQuery, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Caller() caller: Principal) {
    return this.media.fetchByPath(q.path, q.content_type, req, reply, actorOf(caller));
  }

  /** The chat marker helper over HTTP: `MEDIA:<absolute path>` becomes `MEDIA:svc-relay://<token>` (`hermes-relay://` under RELAY_CLIENT_SPELLING=hermes, the scheme the public app renders). */
  @Post('/markers')
  @Auth('operator')
  @HttpCode(200)
  async markers(@Body() body: MarkersDto, @Caller() caller: Principal) {
    const r = await rewriteMediaMarkers(body.text, this.media, actorOf(caller), clientNames(this.config.clientSpelling));
    return { ok: true, text: r.text, registered: r.registered, failed: r.failed };
  }

  @Post('/:token/sensitive')
  @Auth('operator')
  @HttpCode(200)
  sensitive(@Param('token') token: string, @Caller() caller: Principal) {
    return this.media.markSensitive(token, actorOf(caller));
  }

  @Get('/:token')
  @Auth('paired')
  fetch(@Param('token') token: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Caller() caller: Principal) {
    return this.media.fetchToken(token, req, reply, actorOf(caller));
  }
}
