import { Body, Controller, Get, Header, HttpCode, Post, Query } from '@nestjs/common';
import { Auth } from '../common/auth/auth';
import { ActivityQuery, ReportDto } from './image-activity.dto';
import { ImageActivityService } from './image-activity.service';

@Controller('/chat/image-activity')
export class ImageActivityController {
  constructor(private readonly activity: ImageActivityService) {}

  /** Spec 4.3: paired with the `chat` grant; one session's lifecycle only. */
  @Get()
  @Auth('paired', 'chat')
  @Header('Cache-Control', 'no-store')
  list(@Query() q: ActivityQuery) {
    return this.activity.list(q);
  }

  /** The host platform's feed (loopback). */
  @Post()
  @HttpCode(200)
  @Auth('operator')
  report(@Body() b: ReportDto) {
    return this.activity.report(b);
  }
}
