import { Global, Module } from '@nestjs/common';
import { AuthHandshake } from './auth-handshake';
import { AuthOkFields } from './auth-ok-fields';
import { ChannelRouter } from './channel-router';
import { PhoneSocketGateway, PhoneSocketRootGateway } from './phone-socket.gateway';
import { PhoneHub } from './phone-hub.service';

/**
 * Feature modules inject ChannelRouter to register their channel, PhoneHub to reach phones, and
 * AuthOkFields to add to `auth.ok`.
 */
@Global()
@Module({
  providers: [ChannelRouter, AuthOkFields, AuthHandshake, PhoneHub, PhoneSocketGateway, PhoneSocketRootGateway],
  exports: [ChannelRouter, AuthOkFields, PhoneHub],
})
export class PhoneSocketModule {}
