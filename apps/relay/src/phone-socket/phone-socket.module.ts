import { Global, Module } from '@nestjs/common';
import { ChannelRouter } from './channel-router';
import { PhoneSocketGateway, PhoneSocketRootGateway } from './phone-socket.gateway';
import { PhoneHub } from './phone-hub.service';

/** Feature modules inject ChannelRouter to register their channel and PhoneHub to reach phones. */
@Global()
@Module({
  providers: [ChannelRouter, PhoneHub, PhoneSocketGateway, PhoneSocketRootGateway],
  exports: [ChannelRouter, PhoneHub],
})
export class PhoneSocketModule {}
