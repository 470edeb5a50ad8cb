import { Body, Controller, Get, Header, HttpCode, Post, Query } from '@nestjs/common';
import { Auth } from '../common/auth';
import { ReportDto } from './image-activity.dto';
import { ImageActivityService } from './image-activity.service';

@Controller('/chat/image-activity')
export class ImageActivityController {
  constructor(private readonly activity: ImageActivityService) {}

  /** Spec 4.3: paired with the `chat` grant; one session's lifecycle only. */
  @Get()
  @Auth('paired', 'chat')
  @Header('Cache-Control', 'no-store')
  list(@Query('session_id') sessionId: unknown, @Query('since') since: unknown, @Query('profile') profile: unknown) {
    return this.activity.list(sessionId, since, profile);
  }

  /** The host platform's feed (loopback). */
  @Post()
  @HttpCode(200)
  @Auth('loopback')
  report(@Body() b: ReportDto) {
    return this.activity.report(b);
  }
}
