import { Body, Controller, Delete, Get, Header, HttpCode, Post, Res } from '@nestjs/common';
import { CLIPBOARD_CONTENT_TYPE, DomainError, epoch, type Principal } from '@svc/domain';
import type { FastifyReply } from 'fastify';
import { Auth, Caller } from '../common/auth/auth';
import { StageImageDto } from './clipboard.dto';
import { CLIPBOARD_BODY_LIMIT, ClipboardService } from './clipboard.service';

@Controller('/clipboard')
export class ClipboardController {
  constructor(private readonly clipboard: ClipboardService) {}

  /** A phone stages an image (WIRE.md). Its own body limit: base64 of 25 MB. */
  @Post('/inbox')
  @HttpCode(200)
  @Auth('paired', undefined, { bodyLimit: CLIPBOARD_BODY_LIMIT })
  stage(@Body() body: StageImageDto, @Caller() caller: Principal) {
    if (caller.kind !== 'device') throw new DomainError('clipboard.needs_device', 'forbidden', 'images are staged by a paired phone');
    return this.clipboard.stage(body, caller);
  }

  /** What is waiting (host tools and the operator). */
  @Get('/inbox')
  @Auth('operator')
  @Header('Cache-Control', 'no-store')
  list() {
    return this.clipboard.list();
  }

  /** The host tool's one-shot read: the newest fresh image's bytes, then it is gone. */
  @Get('/inbox/latest')
  @Auth('operator')
  async latest(@Res() reply: FastifyReply) {
    const { entry, bytes } = await this.clipboard.takeLatest('operator');
    void reply
      .status(200)
      .header('Content-Type', CLIPBOARD_CONTENT_TYPE[entry.format])
      .header('Cache-Control', 'no-store')
      .header('Content-Disposition', `inline; filename="${entry.fileName}"`)
      .header('X-Clipboard-Id', entry.entryId)
      .header('X-Clipboard-Sha256', entry.sha256)
      .header('X-Clipboard-Staged-At', String(epoch(entry.stagedAt)))
      .send(bytes);
  }

  @Delete('/inbox')
  @Auth('operator')
  clear() {
    return this.clipboard.clear('operator');
  }
}
