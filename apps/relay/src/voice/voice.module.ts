import { Module } from '@nestjs/common';
import { RelaySecurityController } from './security.controller';
import { VoiceController } from './voice.controller';
import { VoiceService } from './voice.service';

@Module({ controllers: [VoiceController, RelaySecurityController], providers: [VoiceService], exports: [VoiceService] })
export class VoiceModule {}
