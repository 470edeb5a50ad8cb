import { Body, Controller, Get, Headers, HttpCode, Param, Put, Res } from '@nestjs/common';
import { actorOf, type Principal } from '@svc/domain';
import type { FastifyReply } from 'fastify';
import { Auth, Caller } from '../common/auth/auth';
import { FileContentDto } from './profiles.dto';
import { ProfilesService } from './profiles.service';

/**
 * Spec 4.7, a profile's files (ProfilesService reads and writes them). Loopback, or a paired phone (the
 * app's profile inspector); the writes (SOUL, memory) need the session's `chat` grant, since they change
 * what the agent is told (a bearer is checked even when it comes from loopback; the operator writes
 * with the operator key instead). Only the operator sees host paths and the whole config.
 */
@Controller('/api/profiles')
export class ProfilesController {
  constructor(private readonly profiles: ProfilesService) {}

  @Get('/:name/config')
  @Auth('operator-or-paired')
  getConfig(@Param('name') name: string, @Caller() caller: Principal) {
    return this.profiles.config(name, caller.kind === 'operator');
  }

  /** `GET /api/profiles/{name}/avatar`: the image's bytes with their type (ProfilesService.avatar). */
  @Get('/:name/avatar')
  @Auth('operator-or-paired')
  getAvatar(@Param('name') name: string, @Res({ passthrough: true }) reply: FastifyReply) {
    const { bytes, headers } = this.profiles.avatar(name);
    void reply.headers(headers);
    return bytes;
  }

  @Get('/:name/skills')
  @Auth('operator-or-paired')
  getSkills(@Param('name') name: string) {
    return this.profiles.skills(name);
  }

  @Get('/:name/soul')
  @Auth('operator-or-paired')
  getSoul(@Param('name') name: string, @Res({ passthrough: true }) reply: FastifyReply) {
    const soul = this.profiles.soul(name);
    if (soul.etag) void reply.header('etag', soul.etag);
    return soul;
  }

  /**
   * `PUT /api/profiles/{name}/soul {content}`: SOUL.md replaced atomically; a phone needs the `chat` grant.
   * The body limit follows the cap (profile-write-limits.ts).
   */
  @Put('/:name/soul')
  @Auth('operator-or-paired', 'chat', { bearerOnLoopback: true })
  @HttpCode(200)
  async putSoul(
    @Param('name') name: string,
    @Body() body: FileContentDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Caller() caller: Principal,
  ) {
    return withEtag(reply, await this.profiles.putSoul(name, body.content, ifMatch, actorOf(caller)));
  }

  /** `PUT /api/profiles/{name}/memory/{filename} {content}`: one memory file, created or replaced; a phone needs the `chat` grant. */
  @Put('/:name/memory/:filename')
  @Auth('operator-or-paired', 'chat', { bearerOnLoopback: true })
  @HttpCode(200)
  async putMemory(
    @Param('name') name: string,
    @Param('filename') filename: string,
    @Body() body: FileContentDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Caller() caller: Principal,
  ) {
    return withEtag(reply, await this.profiles.putMemory(name, filename, body.content, ifMatch, actorOf(caller)));
  }

  @Get('/:name/memory')
  @Auth('operator-or-paired')
  getMemory(@Param('name') name: string) {
    return this.profiles.memory(name);
  }
}

/** A write's answer, with the new file's ETag as a header. */
function withEtag<T>(reply: FastifyReply, written: { body: T; etag: string }): T {
  void reply.header('etag', written.etag);
  return written.body;
}
