import { Module } from '@nestjs/common';
import { NotificationsController } from './notifications.controller';
import { NotificationsService } from './notifications.service';

/** The notification companion: the `notifications` channel and `/notifications/recent`. */
@Module({ controllers: [NotificationsController], providers: [NotificationsService] })
export class NotificationsModule {}
