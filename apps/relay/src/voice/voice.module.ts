import { Module } from '@nestjs/common';
import type { RelayConfig } from '../common/config/relay-config';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { VoiceProviderChoices } from './provider-choices.service';
import { VoiceSessionCreation } from './session-creation.service';
import { RelaySecurity } from './relay-security.service';
import { RelaySecurityController } from './security.controller';
import { VoiceConfigFiles } from './voice-config';
import { VoiceController } from './voice.controller';
import { VoiceProviders } from './voice-providers';
import { VoiceService } from './voice.service';
import { VoiceSessions } from './voice-sessions.service';
import { VoiceSettings } from './voice-settings.service';
import { VoiceWire } from './voice-wire';

@Module({
  controllers: [VoiceController, RelaySecurityController],
  providers: [
    { provide: VoiceConfigFiles, useFactory: (c: RelayConfig) => new VoiceConfigFiles(c.svcConfigPath, c.svcHome), inject: [RELAY_CONFIG] },
    // Brand-named things written in the relay's spelling (RELAY_CLIENT_SPELLING).
    { provide: VoiceWire, useFactory: (c: RelayConfig) => new VoiceWire(c.clientSpelling), inject: [RELAY_CONFIG] },
    VoiceProviders,
    VoiceSettings,
    VoiceProviderChoices,
    VoiceService,
    RelaySecurity,
    VoiceSessionCreation,
    VoiceSessions,
  ],
  // The console's Voice page reads the providers, the settings and the security switch through these.
  exports: [VoiceService, VoiceSessions, VoiceProviders, VoiceSettings, RelaySecurity],
})
export class VoiceModule {}
