import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { DomainError, type Principal } from '@svc/domain';
import type { FastifyReply } from 'fastify';
import { Auth, Caller } from '../common/auth/auth';
import { CancelQueryDto, ChatFilterDto, ChatIdParam, MessageIdParam, PostMessageDto, PostReplyDto, RepliesQueryDto } from './threads.dto';
import { ThreadViews } from './thread-views';
import { PhoneThreadsService } from './threads.service';

/**
 * Phone Threads over HTTP. Auth classes (spec 4.6, decided in docs/PROTOCOL.md): "platform" is the host
 * process on loopback; the operator on loopback may always inspect and cancel what a phone may.
 */
@Controller('/phone')
export class PhoneController {
  constructor(
    private readonly phone: PhoneThreadsService,
    private readonly views: ThreadViews,
  ) {}

  @Post('/message')
  @HttpCode(200)
  @Auth('platform-or-paired')
  post(@Body() b: PostMessageDto, @Caller() caller: Principal) {
    return this.phone.post(
      {
        chatId: b.chat_id,
        text: b.text,
        title: b.title,
        surfacing: b.surfacing,
        replyTo: b.reply_to,
        metadata: b.metadata,
        messageId: b.message_id,
        sessionId: b.session_id,
      },
      caller,
    );
  }

  @Get('/replies')
  @Auth('platform-or-paired')
  replies(@Query() q: RepliesQueryDto, @Caller() caller: Principal, @Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('Cache-Control', 'no-store');
    return this.phone.replies({ since: q.since, wait: q.wait ?? q.timeout, limit: q.limit, chatId: q.chat_id }, caller, (release) =>
      reply.raw.once('close', release),
    );
  }

  @Post('/replies')
  @HttpCode(200)
  @Auth('paired')
  reply(@Body() b: PostReplyDto, @Caller() caller: Principal) {
    if (caller.kind !== 'device') throw new DomainError('phone.reply_needs_device', 'forbidden', 'replies come from a paired phone');
    return this.phone.reply({ chatId: b.chat_id, text: b.text, replyTo: b.reply_to, clientMsgId: b.message_id }, caller, 'http');
  }

  @Get('/outbound')
  @Auth('operator-or-paired')
  @Header('Cache-Control', 'no-store')
  outbound(@Query() q: ChatFilterDto) {
    return this.views.outbound(q.chat_id);
  }

  /** One message's state, queued or not (while the read model still holds it). */
  @Get('/outbound/:message_id')
  @Auth('operator-or-paired')
  @Header('Cache-Control', 'no-store')
  one(@Param() p: MessageIdParam) {
    return this.views.message(p.message_id);
  }

  @Delete('/outbound/:message_id')
  @Auth('operator-or-paired')
  cancel(@Param() p: MessageIdParam, @Caller() caller: Principal) {
    return this.phone.cancel(p.message_id, caller);
  }

  /**
   * `?message_id=` cancels that one message (the desktop CLI's `relay queue --cancel <id>`); without it, every
   * queued one. Any other key is refused (CancelQueryDto): a misspelt filter must not cancel everything.
   */
  @Delete('/outbound')
  @Auth('operator-or-paired')
  cancelAll(@Query() q: CancelQueryDto, @Caller() caller: Principal) {
    if (q.message_id !== undefined) return this.phone.cancelOne(q.message_id, caller);
    return this.phone.cancelAll(q.chat_id, caller);
  }

  @Get('/threads')
  @Auth('operator-or-paired')
  @Header('Cache-Control', 'no-store')
  threads() {
    return this.views.threads();
  }

  @Get('/threads/:chat_id')
  @Auth('operator-or-paired')
  @Header('Cache-Control', 'no-store')
  thread(@Param() p: ChatIdParam) {
    return this.views.thread(p.chat_id);
  }
}
