import { Module } from '@nestjs/common';
import { RelaySecurityController } from './security.controller';
import { VoiceController } from './voice.controller';
import { VoiceService } from './voice.service';
import { VoiceOutputService } from './voice-output.service';

@Module({
  controllers: [VoiceController, RelaySecurityController],
  providers: [VoiceService, VoiceOutputService],
  exports: [VoiceService, VoiceOutputService],
})
export class VoiceModule {}
