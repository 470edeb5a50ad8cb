import { Module } from '@nestjs/common';
import { BridgeOperatorController } from './bridge-operator.controller';
import { BridgeService } from './bridge.service';
import { DeviceControlController } from './device-control.controller';

/** The `bridge` channel, Device Control (spec 4.9) with its safety pipeline, and the operator routes (4.10). */
@Module({
  controllers: [DeviceControlController, BridgeOperatorController],
  providers: [BridgeService],
  exports: [BridgeService],
})
export class BridgeModule {}
