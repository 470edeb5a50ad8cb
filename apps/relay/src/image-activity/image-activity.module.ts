import { Module } from '@nestjs/common';
import { AgentStoreModule } from '../agent-store/agent-store.module';
import { ImageActivityController } from './image-activity.controller';
import { ImageActivityService } from './image-activity.service';

/** `/chat/image-activity`: the platform's feed (loopback) and the phone's view (paired, chat grant). */
@Module({ imports: [AgentStoreModule], controllers: [ImageActivityController], providers: [ImageActivityService] })
export class ImageActivityModule {}
