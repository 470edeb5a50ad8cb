import { Module } from '@nestjs/common';
import { ClipboardController } from './clipboard.controller';
import { ClipboardService } from './clipboard.service';

/** The paste inbox: phones stage an image, host tools read it once. */
@Module({ controllers: [ClipboardController], providers: [ClipboardService] })
export class ClipboardModule {}
