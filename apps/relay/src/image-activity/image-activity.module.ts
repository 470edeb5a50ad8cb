import { Module } from '@nestjs/common';
import { ImageActivityController } from './image-activity.controller';
import { ImageActivityService } from './image-activity.service';

/** `/chat/image-activity`: the platform's feed (loopback) and the phone's view (paired, chat grant). */
@Module({ controllers: [ImageActivityController], providers: [ImageActivityService] })
export class ImageActivityModule {}
