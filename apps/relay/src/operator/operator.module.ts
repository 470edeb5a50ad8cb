import { Module } from '@nestjs/common';
import { BridgeModule } from '../bridge/bridge.module';
import { VoiceModule } from '../voice/voice.module';
import { RelayInfoController } from './relay-info.controller';
import { RelayInfoService } from './relay-info.service';
import { UsageController } from './usage.controller';

@Module({ imports: [BridgeModule, VoiceModule], controllers: [RelayInfoController, UsageController], providers: [RelayInfoService] })
export class OperatorModule {}
