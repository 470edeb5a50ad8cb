import { Module } from '@nestjs/common';
import { RelaySecurityController } from './security.controller';
import { VoiceController } from './voice.controller';
import { VoiceService } from './voice.service';
import { VoiceSessions } from './voice-sessions.service';

@Module({
  controllers: [VoiceController, RelaySecurityController],
  providers: [VoiceService, VoiceSessions],
  exports: [VoiceService, VoiceSessions],
})
export class VoiceModule {}
