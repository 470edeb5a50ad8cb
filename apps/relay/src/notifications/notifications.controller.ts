import { Controller, Get, Header, Query } from '@nestjs/common';
import { Auth } from '../common/auth/auth';
import { RecentQueryDto } from './notifications.dto';
import { NotificationsService } from './notifications.service';

@Controller('/notifications')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  /** Spec 5 rule 5: loopback callers need no bearer; remote callers need a paired one. */
  @Get('/recent')
  @Auth('platform-or-paired')
  @Header('Cache-Control', 'no-store')
  recent(@Query() q: RecentQueryDto) {
    return this.notifications.recent(q.limit);
  }
}
